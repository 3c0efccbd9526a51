import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { InputError, UsageError } from "../../errors.js";
import type { CliIo } from "../terminal/io.js";
import type { Output } from "../terminal/output.js";
import { type INTERRUPTED, readStdin } from "./stdin.js";
import { cannotRead } from "../../util/readable-file.js";

/** One request body is held whole; a webhook's is far smaller (senders cap theirs at a few MiB). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const TOO_LARGE = `the body is over ${MAX_BODY_BYTES / 1024 / 1024} MiB`;

/**
 * A request body's exact bytes from a file, or `-` for standard input (`sign`, `verify`): nothing
 * decoded or re-encoded, so what is signed is what is sent. Missing: a UsageError saying what to give.
 */
export async function readBodyInput(file: string | undefined, io: CliIo, output: Output, what: string): Promise<Buffer | typeof INTERRUPTED> {
  if (file === undefined) throw new UsageError(`give the body ${what}: a FILE, or - for standard input`);
  if (file === "-") return await readStdin(io, output, () => readStream(io.stdin));
  const path = resolve(io.cwd, file);
  try {
    if (statSync(path).size > MAX_BODY_BYTES) throw new InputError(TOO_LARGE, { file });
    return readFileSync(path);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw cannotRead(error, { file });
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > MAX_BODY_BYTES) throw new InputError(TOO_LARGE, { file: "stdin" });
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
