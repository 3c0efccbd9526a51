import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";

/**
 * Standard input is copied to a temporary file first (docs/recording.md#standard-input), so it
 * gets the same two passes (validate, then send) as a file.
 */
export async function spoolToTempFile(input: NodeJS.ReadableStream, signal?: AbortSignal): Promise<{ path: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-replay-"));
  const path = join(dir, "stdin.ndjson");
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    await pipeline(input, createWriteStream(path), signal ? { signal } : {});
  } catch (error) {
    remove();
    throw error;
  }
  return { path, remove };
}
