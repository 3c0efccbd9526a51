import { resolve } from "node:path";
import { UsageError } from "../../errors.js";
import { replaceFile } from "../../util/replace-file.js";

/**
 * `--ready-file FILE` (listen, serve): the URL and a newline (listen: then its control API's URL),
 * written once listening. Written to a temporary file and renamed, so a script polling for FILE
 * never reads half a URL.
 */
export function writeReadyFile(cwd: string, flagValue: string, urls: string | readonly string[]): void {
  const path = resolve(cwd, flagValue);
  try {
    replaceFile(path, `${(typeof urls === "string" ? [urls] : urls).join("\n")}\n`);
  } catch (error) {
    throw new UsageError(`cannot write: ${(error as Error).message}`, { flag: "--ready-file", file: flagValue });
  }
}
