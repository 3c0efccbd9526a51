import { isUtf8 } from "node:buffer";
import { InputError } from "../../errors.js";
import { type InputMessage, parseMessages } from "../../messages/input.js";
import { describeBound } from "../../util/bounded-read.js";
import type { CliIo } from "../terminal/io.js";
import type { Output } from "../terminal/output.js";
import { MAX_INPUT_BYTES, readInputBytes } from "./body-input.js";
import { INTERRUPTED } from "./stdin.js";

export interface ReadMessagesOptions {
  /** The command, as its refusal of a too-large input names it (`send`, `function run`). */
  command: string;
  /** Bodies as read (`send --raw`): problems become warnings. */
  raw: boolean;
  /** An empty input (or `[]`): what to return, or throw, naming the input (`stdin` or the file). */
  onEmpty: (name: string) => InputMessage[];
  /** Where the check's warnings go (default: printed); `function run` takes hand-written events without them. */
  warn?: (warning: string) => void;
}

/**
 * Messages from a file, or `-` for standard input, as `send` reads them (docs/commands/send.md#input):
 * a JSON object, an array, NDJSON or concatenated JSON, UTF-8, each checked, warnings printed.
 * Resolves INTERRUPTED when the stop signal ends a read of standard input.
 */
export async function readMessages(file: string, io: CliIo, output: Output, options: ReadMessagesOptions): Promise<InputMessage[] | typeof INTERRUPTED> {
  const name = file === "-" ? "stdin" : file;
  // A command reading messages checks its whole input first, so it holds it (docs/commands/send.md#input).
  const tooLarge = `the input is over ${describeBound(MAX_INPUT_BYTES)}: ${options.command} reads it whole; use replay, which streams NDJSON`;
  const bytes = await readInputBytes(file, io, output, tooLarge);
  if (bytes === INTERRUPTED) return bytes;
  const text = decodeUtf8(bytes, name);
  if (/^\s*(\[\s*\])?\s*$/.test(text)) return options.onEmpty(name);
  const parsed = parseMessages(text, name, { raw: options.raw });
  for (const warning of parsed.warnings) (options.warn ?? output.warn)(warning);
  return parsed.messages;
}

/** The input as text, refused (naming the first bad line) when it is not UTF-8, as replay does: nothing is re-encoded. */
function decodeUtf8(bytes: Buffer, file: string): string {
  if (isUtf8(bytes)) return bytes.toString("utf8");
  let start = 0;
  for (let line = 1; start <= bytes.length; line++) {
    const found = bytes.indexOf(0x0a, start);
    const end = found === -1 ? bytes.length : found;
    if (!isUtf8(bytes.subarray(start, end))) throw new InputError("not valid UTF-8; nothing was sent", { file, line });
    start = end + 1;
  }
  throw new InputError("not valid UTF-8; nothing was sent", { file });
}
