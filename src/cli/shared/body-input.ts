import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { InputError, UsageError } from "../../errors.js";
import { describeBound, readAtMost } from "../../util/bounded-read.js";
import { cannotRead } from "../../util/readable-file.js";
import type { CliIo } from "../terminal/io.js";
import type { Output } from "../terminal/output.js";
import { type INTERRUPTED, readStdin } from "./stdin.js";

/**
 * What a command reads whole from a file or standard input holds at most: a request body (senders
 * cap theirs at a few MiB), or the messages `send` checks before sending the first
 * (docs/commands/send.md#input; past it, replay streams).
 */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * The bytes of a file, or `-` for standard input, read as a stream (a pipe or a device alike: what
 * is held stops at MAX_INPUT_BYTES, whatever the source streams, /dev/zero included). Past the bound,
 * an InputError naming the input (`stdin` or the file) says `tooLarge`. Resolves INTERRUPTED when
 * the stop signal ends a read of standard input.
 */
export async function readInputBytes(file: string, io: CliIo, output: Output, tooLarge: string): Promise<Buffer | typeof INTERRUPTED> {
  const name = file === "-" ? "stdin" : file;
  const read = async (stream: AsyncIterable<Uint8Array | string>): Promise<Buffer> => {
    let bytes: Buffer | undefined;
    try {
      bytes = await readAtMost(stream, MAX_INPUT_BYTES);
    } catch (error) {
      throw cannotRead(error, { file: name });
    }
    if (bytes === undefined) throw new InputError(tooLarge, { file: name });
    return bytes;
  };
  return file === "-" ? await readStdin(io, output, () => read(io.stdin)) : await read(createReadStream(resolve(io.cwd, file)));
}

/**
 * A request body's exact bytes from a file, or `-` for standard input (`sign`, `verify`): nothing
 * decoded or re-encoded, so what is signed is what is sent. Missing: a UsageError saying what to give.
 */
export async function readBodyInput(file: string | undefined, io: CliIo, output: Output, what: string): Promise<Buffer | typeof INTERRUPTED> {
  if (file === undefined) throw new UsageError(`give the body ${what}: a FILE, or - for standard input`);
  return await readInputBytes(file, io, output, `the body is over ${describeBound(MAX_INPUT_BYTES)}`);
}
