import { accessSync, closeSync, constants, fstatSync, openSync, readFileSync, statSync } from "node:fs";
import { InputError, type ErrorSource } from "../errors.js";
import { describeBound } from "./bounded-read.js";

/**
 * The bounds of the files an option names (docs/security.md#files-named-by-options): settings
 * (--config, --secret-file, --ca, --tls-cert, --tls-key, expect --from, verify --header @FILE) are
 * a few KB at most; listen's scripted answers (--responses, --respond-body @FILE) hold bodies, as
 * large as an app's answer listen relays.
 */
export const MAX_SETTINGS_FILE_BYTES = 1024 * 1024;
export const MAX_ANSWER_FILE_BYTES = 8 * 1024 * 1024;

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
    throw cannotRead(error, source);
  }
}

/** Why a file cannot be read, in words (the path is already named by `source`), with the system's code. */
const REASONS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "permission denied",
  EISDIR: "a directory, not a file",
  ENOTDIR: "a part of the path is not a directory",
  ELOOP: "too many symbolic links",
};

export function cannotRead(error: unknown, source: ErrorSource): InputError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code !== undefined && REASONS[code] !== undefined ? `${REASONS[code]} (${code})` : (error as Error).message;
  return new InputError(`cannot read: ${reason}`, source);
}

/**
 * The bytes of a file an option names: a regular file of at most `maxBytes`, else an InputError
 * from `source` (the flag and the file). A pipe or a device is refused before it is opened, so
 * neither a FIFO without a writer (which would block) nor /dev/zero (which never ends) is read.
 */
export function readRegularFile(path: string, source: ErrorSource, maxBytes: number): Buffer {
  if (!isReadableFile(path, source)) throw new InputError("not a regular file (a pipe, a device or a directory): give a file", source);
  const tooLarge = (): InputError => new InputError(`the file is over ${describeBound(maxBytes)}, the most this option reads`, source);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw cannotRead(error, source);
  }
  try {
    if (fstatSync(fd).size > maxBytes) throw tooLarge();
    // A regular file is read up to the size fstat gave, so what grows meanwhile is not read.
    return readFileSync(fd);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw cannotRead(error, source);
  } finally {
    closeSync(fd);
  }
}
