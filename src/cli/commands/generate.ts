import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { UsageError } from "../../errors.js";
import { buildExamples, type ExampleOptions } from "../../messages/examples.js";
import { MESSAGE_TYPES, type AliasKeys, type MessageType } from "../../messages/schemas.js";
import type { CliIo, CommandContext } from "../io.js";
import { addExampleOptions, exampleOptionsShape } from "../example-options.js";
import { aliasKeys, messageType, parseOptions, stripUndefined } from "../options.js";

export interface GenerateOptions extends ExampleOptions {
  types: MessageType[];
  out?: string;
  pretty: boolean;
  aliasKeys: AliasKeys;
}

/** Prints example messages: NDJSON by default, indented JSON with `pretty`. */
export async function generate(options: GenerateOptions, io: CliIo): Promise<number> {
  const messages = buildExamples(options.types.length > 0 ? options.types : MESSAGE_TYPES, options);
  const text = messages.map((m) => (options.pretty ? JSON.stringify(m, null, 2) : JSON.stringify(m))).join("\n") + "\n";
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

const rawSchema = z.object({
  ...exampleOptionsShape,
  out: z.string().optional(),
  pretty: z.boolean().default(false),
  aliasKeys: aliasKeys.default("spec"),
});

export function registerGenerate(program: Command, context: CommandContext): void {
  const command = program
    .command("generate")
    .description("print example messages of every type (page screen identify track alias group delete) as NDJSON")
    .argument("[types...]", `message types to print (default: all): ${MESSAGE_TYPES.join(", ")}`);
  addExampleOptions(command)
    .option("--out <file>", "write to a file instead of stdout")
    .option("--pretty", "indented JSON instead of NDJSON")
    .option("--alias-keys <style>", "alias keys: spec ('Previous ID', 'User ID') or camel (previousId, userId)", "spec")
    .addHelpText("after", "\nExamples:\n  $ webhook-cli generate\n  $ webhook-cli generate track identify --user-id u_42 --now 2024-01-01T00:00:00.000Z --seed 7 --pretty")
    .action(async (types: string[], raw: Record<string, unknown>) => {
      const parsed = stripUndefined(parseOptions(rawSchema, raw));
      const typeList = types.map((t) => messageType("[types...]").parse(t));
      context.exitCode = await generate({ ...parsed, types: typeList }, context.io);
    });
}
