import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../../../errors.js";
import { buildExamples } from "../../../messages/examples.js";
import { MESSAGE_TYPES, type MessageType } from "../../../messages/names.js";
import type { CliIo } from "../../terminal/io.js";
import type { GenerateFlags } from "./options.js";

export type GenerateOptions = GenerateFlags & { types: MessageType[] };

/** Prints example messages: NDJSON by default, indented JSON with `pretty`. */
export async function generate(options: GenerateOptions, io: CliIo): Promise<number> {
  const messages = buildExamples(options.types.length > 0 ? options.types : MESSAGE_TYPES, options);
  const text = `${messages.map((m) => (options.pretty ? JSON.stringify(m, null, 2) : JSON.stringify(m))).join("\n")}\n`;
  if (options.out !== undefined) {
    try {
      writeFileSync(resolve(io.cwd, options.out), text);
    } catch (error) {
      throw new UsageError(`cannot write: ${(error as Error).message}`, { flag: "--out", file: options.out });
    }
  } else {
    io.stdout.write(text);
  }
  return 0;
}
