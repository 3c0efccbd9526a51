import { renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../errors.js";

/**
 * `--ready-file FILE` (listen, serve): the URL and a newline, written once listening. Written to a
 * temporary file and renamed, so a script polling for FILE never reads half a URL.
 */
export function writeReadyFile(cwd: string, flagValue: string, url: string): void {
  const path = resolve(cwd, flagValue);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, `${url}\n`);
    renameSync(temp, path);
  } catch (error) {
    throw new UsageError(`cannot write: ${(error as Error).message}`, { flag: "--ready-file", file: flagValue });
  }
}
