import { isUtf8 } from "node:buffer";
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { InputError } from "../errors.js";
import { type InputMessage, parseMessages } from "../messages/input.js";
import type { CliIo } from "./io.js";
import type { Output } from "./output.js";
import { INTERRUPTED, readStdin } from "./stdin.js";

/** A command reading messages holds its whole input in memory; past this, replay (which streams) is the tool. */
const MAX_INPUT_BYTES = 64 * 1024 * 1024;
const TOO_LARGE = `the input is over ${MAX_INPUT_BYTES / 1024 / 1024} MiB: this command reads it whole; use replay, which streams NDJSON`;

export interface ReadMessagesOptions {
  /** Bodies as read (`send --raw`): problems become warnings. */
  raw: boolean;
  /** An empty input (or `[]`): what to return, or throw, naming the input (`stdin` or the file). */
  onEmpty: (name: string) => InputMessage[];
  /** Where the check's warnings go (default: printed); `function run` takes hand-written events without them. */
  warn?: (warning: string) => void;
}

/**
 * Messages from a file, or `-` for standard input, as `send` reads them (docs/commands/send.md):
 * a JSON object, an array, NDJSON or concatenated JSON, UTF-8, each checked, warnings printed.
 * Resolves INTERRUPTED when the stop signal ends a read of standard input.
 */
export async function readMessages(file: string, io: CliIo, output: Output, options: ReadMessagesOptions): Promise<InputMessage[] | typeof INTERRUPTED> {
  const name = file === "-" ? "stdin" : file;
  let bytes: Buffer;
  if (file === "-") {
    const read = await readStdin(io, output, () => readStream(io.stdin, name));
    if (read === INTERRUPTED) return read;
    bytes = read;
  } else bytes = readInputFile(resolve(io.cwd, file), file);
  const text = decodeUtf8(bytes, name);
  if (/^\s*(\[\s*\])?\s*$/.test(text)) return options.onEmpty(name);
  const parsed = parseMessages(text, name, { raw: options.raw });
  for (const warning of parsed.warnings) (options.warn ?? output.warn)(warning);
  return parsed.messages;
}

function readInputFile(path: string, file: string): Buffer {
  try {
    if (statSync(path).size > MAX_INPUT_BYTES) throw new InputError(TOO_LARGE, { file });
    return readFileSync(path);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read: ${(error as Error).message}`, { file });
  }
}

async function readStream(stream: NodeJS.ReadableStream, file: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > MAX_INPUT_BYTES) throw new InputError(TOO_LARGE, { file });
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
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
