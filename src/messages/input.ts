import { InputError } from "../errors.js";
import { checkMessage, type ShapeIssue } from "./check.js";
import { isRecordedRequest } from "./recorded-request.js";
import type { Message } from "./schemas.js";
import { parseUntrustedJson } from "../json/parse.js";

/** One message read from input, with where it came from. */
export interface InputMessage {
  /** The message; absent only under `raw` when the value is not a valid message (or not JSON). */
  message: Message | undefined;
  /** The exact body to send: `JSON.stringify(message)`, or under `raw` the text as read. */
  body: string;
  /** The line the value starts on (from 1). A JSON array: the element's position (from 1). */
  line: number;
  /** How to name this message in errors and warnings: `events.ndjson:3` or `events.json: [2]`. */
  where: string;
}

export interface ParsedInput {
  messages: InputMessage[];
  /** Unknown keys (allowed, non-strict), and under `raw` every problem, named by place and key. */
  warnings: string[];
}

export interface ParseOptions {
  /**
   * Send bodies as read (`send --raw`): each JSON value's own text, or the
   * whole input when it is not a sequence of JSON values; problems become warnings.
   */
  raw?: boolean;
}

interface Entry {
  value: unknown;
  line: number;
  where: string;
  source: { file: string; line?: number; key?: string };
}

/**
 * Parses `send`'s input: one JSON object, a JSON array of objects, NDJSON, or
 * any stream of concatenated JSON values (`generate --pretty`); blank lines
 * skipped, BOM and trailing `\r` stripped. Every message is checked
 * (non-strict); the first problem is thrown naming the file, the line or
 * index, and the key, so nothing is sent.
 */
export function parseMessages(text: string, file: string, options: ParseOptions = {}): ParsedInput {
  const source = text.replace(/^\uFEFF/, "");
  if (source.trim() === "") throw new InputError("no messages: the input is empty", { file });
  if (options.raw) return rawEntries(source, file);

  const whole = tryParse(source);
  if (whole.ok && Array.isArray(whole.value)) {
    if (whole.value.length === 0) throw new InputError("no messages: the JSON array is empty", { file });
    return checkAll(whole.value.map((value, index) => ({ value, line: index + 1, where: `${file}: [${index}]`, source: { file, key: `[${index}]` } })));
  }
  // A document that starts as an array cannot be a stream of objects: report the JSON error.
  if (!whole.ok && source.trimStart().startsWith("[")) throw new InputError(`not valid JSON: ${whole.error}`, { file });

  const entries: Entry[] = [];
  for (const segment of splitJsonValues(source)) {
    const parsed = tryParse(segment.text);
    if (!parsed.ok) throw new InputError(`not valid JSON: ${parsed.error}`, { file, line: segment.line });
    entries.push({ value: parsed.value, line: segment.line, where: `${file}:${segment.line}`, source: { file, line: segment.line } });
  }
  return checkAll(entries);
}

function checkAll(entries: readonly Entry[]): ParsedInput {
  const recorded = entries.find((entry) => isRecordedRequest(entry.value));
  if (recorded !== undefined) throw recordingGiven(recorded);
  const messages: InputMessage[] = [];
  const warnings: string[] = [];
  const problems: { entry: Entry; issue: ShapeIssue }[] = [];
  for (const entry of entries) {
    const check = checkMessage(entry.value);
    for (const issue of check.errors) problems.push({ entry, issue });
    for (const warning of check.warnings) warnings.push(`${entry.where}: ${warning.message}`);
    if (check.errors.length === 0) {
      messages.push({ message: entry.value as Message, body: JSON.stringify(entry.value), line: entry.line, where: entry.where });
    }
  }
  const first = problems[0];
  if (first) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""})` : "";
    const key = first.entry.source.key !== undefined ? `${first.entry.source.key}.${first.issue.key}` : first.issue.key;
    throw new InputError(`${first.issue.message}${more}; nothing was sent`, { ...first.entry.source, key });
  }
  return { messages, warnings };
}

/** A recorded request where a message was expected: say what it is and which command sends it. */
function recordingGiven(entry: Entry): InputError {
  const { file } = entry.source;
  const input = file === "stdin" ? "-" : /^[\w./-]+$/.test(file) ? file : "FILE";
  return new InputError(
    `a recorded request (listen --record or a dead-letter file), not a message: replay sends recordings (webhook-cli replay ${input} --url URL); nothing was sent`,
    entry.source,
  );
}

/** `--raw`: every JSON value as written (an array is one body), or the whole input when it is not JSON. */
function rawEntries(source: string, file: string): ParsedInput {
  const segments = splitJsonValues(source);
  const values = segments.map((segment) => ({ segment, parsed: tryParse(segment.text) }));
  const bad = values.find((v) => !v.parsed.ok);
  if (bad && !bad.parsed.ok) {
    return {
      messages: [{ message: undefined, body: source, line: 1, where: file }],
      warnings: [`${file}: not valid JSON (${bad.parsed.error}); sent whole, as read (--raw)`],
    };
  }
  const messages: InputMessage[] = [];
  const warnings: string[] = [];
  for (const { segment, parsed } of values) {
    const value = parsed.ok ? parsed.value : undefined;
    const where = `${file}:${segment.line}`;
    const check = checkMessage(value);
    for (const issue of [...check.errors, ...check.warnings])
      warnings.push(`${where}: ${issue.message}${check.errors.length > 0 ? " (sent anyway: --raw)" : ""}`);
    messages.push({ message: check.errors.length === 0 ? (value as Message) : undefined, body: segment.text, line: segment.line, where });
  }
  return { messages, warnings };
}

/**
 * Splits text into its top-level JSON values by bracket depth (strings
 * respected), without parsing them: `{…}{…}`, NDJSON and pretty-printed
 * objects one after another. A value that never closes runs to the end.
 */
function splitJsonValues(text: string): { text: string; line: number }[] {
  const segments: { text: string; line: number }[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 10) line += 1;
    if (c === 10 || c === 13 || c === 32 || c === 9) {
      i += 1;
      continue;
    }
    const start = i;
    const startLine = line;
    i = valueEnd(text, i);
    const segment = text.slice(start, i);
    for (let k = 0; k < segment.length; k++) if (segment.charCodeAt(k) === 10) line += 1;
    segments.push({ text: segment, line: startLine });
  }
  return segments;
}

/** The index just past the value starting at `start`. */
function valueEnd(text: string, start: number): number {
  const first = text[start];
  if (first !== "{" && first !== "[" && first !== '"') {
    // A scalar (or garbage): up to the next whitespace or the start of another value.
    let i = start + 1;
    while (i < text.length && !/[\s{["]/.test(text[i] as string)) i += 1;
    return i;
  }
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i += 1;
      else if (ch === '"') {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth += 1;
    else if (ch === "}" || ch === "]") {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: parseUntrustedJson(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
