import { InputError } from "../errors.js";
import { checkMessage, type ShapeIssue } from "./check.js";
import type { Message } from "./schemas.js";
import { parseJson } from "../util/json-depth.js";

/** One message read from input, with where it came from. */
export interface InputMessage {
  message: Message;
  /** NDJSON: the line number (from 1). A JSON array: the element's position (from 1). A single object: 1. */
  line: number;
  /** How to name this message in errors and warnings: `events.ndjson:3` or `events.json: [2]`. */
  where: string;
}

export interface ParsedInput {
  messages: InputMessage[];
  /** Unknown keys (allowed, non-strict), named by place and key. */
  warnings: string[];
}

/**
 * Parses `send`'s input: one JSON object, a JSON array of objects, or NDJSON
 * (one message per line; blank lines skipped; BOM and trailing `\r` stripped).
 * Every message is checked (non-strict); the first problem is thrown naming
 * the file, the line or index, and the key, so nothing is sent.
 */
export function parseMessages(text: string, file: string): ParsedInput {
  const source = text.replace(/^\uFEFF/, "");
  if (source.trim() === "") throw new InputError("no messages: the input is empty", { file });

  const whole = tryParse(source);
  if (whole.ok) {
    if (Array.isArray(whole.value)) {
      if (whole.value.length === 0) throw new InputError("no messages: the JSON array is empty", { file });
      return checkAll(
        whole.value.map((value, index) => ({ value, line: index + 1, where: `${file}: [${index}]`, source: { file, key: `[${index}]` } })),
      );
    }
    // A one-line document is also a one-line NDJSON file: name its line.
    const oneLine = !source.trim().includes("\n");
    const line = source.split("\n").findIndex((l) => l.trim() !== "") + 1;
    return checkAll([{ value: whole.value, line: oneLine ? line : 1, where: oneLine ? `${file}:${line}` : file, source: oneLine ? { file, line } : { file } }]);
  }
  // A document that starts as an array cannot be NDJSON of objects: report the JSON error.
  if (source.trimStart().startsWith("[")) throw new InputError(`not valid JSON: ${whole.error}`, { file });

  const entries: Entry[] = [];
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const lineText = (lines[i] as string).replace(/\r$/, "");
    if (lineText.trim() === "") continue;
    const parsed = tryParse(lineText);
    if (!parsed.ok) {
      // A pretty-printed object with a typo fails on its first line: the whole-document error is the useful one.
      const message = entries.length === 0 && lineText.trim() === "{" ? `not valid JSON: ${whole.error}` : `not valid JSON: ${parsed.error}`;
      throw new InputError(message, entries.length === 0 && lineText.trim() === "{" ? { file } : { file, line: i + 1 });
    }
    entries.push({ value: parsed.value, line: i + 1, where: `${file}:${i + 1}`, source: { file, line: i + 1 } });
  }
  return checkAll(entries);
}

interface Entry {
  value: unknown;
  line: number;
  where: string;
  source: { file: string; line?: number; key?: string };
}

function checkAll(entries: readonly Entry[]): ParsedInput {
  const messages: InputMessage[] = [];
  const warnings: string[] = [];
  const problems: { entry: Entry; issue: ShapeIssue }[] = [];
  for (const entry of entries) {
    const check = checkMessage(entry.value);
    for (const issue of check.errors) problems.push({ entry, issue });
    for (const warning of check.warnings) warnings.push(`${entry.where}: ${warning.message}`);
    if (check.errors.length === 0) messages.push({ message: entry.value as Message, line: entry.line, where: entry.where });
  }
  const first = problems[0];
  if (first) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""})` : "";
    const key = first.entry.source.key !== undefined ? `${first.entry.source.key}.${first.issue.key}` : first.issue.key;
    throw new InputError(`${first.issue.message}${more}; nothing was sent`, { ...first.entry.source, key });
  }
  return { messages, warnings };
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: parseJson(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
