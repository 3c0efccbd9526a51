import { resolve } from "node:path";
import { type ErrorSource, InputError } from "../errors.js";
import { isPlainObject, parseUntrustedJson } from "../json/parse.js";
import { MAX_SETTINGS_FILE_BYTES, readRegularFile } from "../util/readable-file.js";

/** A function's settings: the object its handlers get as their second argument. */
export type FunctionSettings = Record<string, unknown>;

/** Settings are a JSON object (the handlers' second argument); anything else is named as what it is. */
export function checkSettings(value: unknown, source: ErrorSource): FunctionSettings {
  if (isPlainObject(value)) return value;
  const what = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
  throw new InputError(`settings must be a JSON object, not ${what}`, source);
}

/**
 * `--settings FILE|JSON`: a value that starts with `{` (or `[`) is the JSON itself; anything else
 * names a file holding it (read from `cwd`: a regular file of at most 1 MiB).
 */
export function readSettings(value: string, cwd: string, flag: string): FunctionSettings {
  const text = value.trimStart();
  if (text.startsWith("{") || text.startsWith("[")) return parseSettings(text, { flag });
  const contents = readRegularFile(resolve(cwd, value), { flag, file: value }, MAX_SETTINGS_FILE_BYTES).toString("utf8");
  return parseSettings(contents.replace(/^\uFEFF/, ""), { file: value });
}

function parseSettings(text: string, source: ErrorSource): FunctionSettings {
  let value: unknown;
  try {
    value = parseUntrustedJson(text);
  } catch (error) {
    throw new InputError(`settings are not valid JSON: ${(error as Error).message}`, source);
  }
  return checkSettings(value, source);
}
