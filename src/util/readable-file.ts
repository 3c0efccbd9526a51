import { accessSync, constants, statSync } from "node:fs";
import { InputError, type ErrorSource } from "../errors.js";

/**
 * Checks up front that `path` can be read, so a mistake is named before any
 * work starts: true for a regular file, false for a pipe or another special
 * file (which the caller may copy aside); unreadable is an InputError from `source`.
 */
export function isReadableFile(path: string, source: ErrorSource): boolean {
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isFile();
  } catch (error) {
    throw new InputError(`cannot read: ${(error as Error).message}`, source);
  }
}
