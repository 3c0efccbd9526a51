import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { UsageError } from "../../errors.js";
import { buildExamples } from "../../messages/examples.js";
import { MESSAGE_TYPES, type AliasKeys, type MessageType } from "../../messages/schemas.js";
import type { CliIo, CommandContext } from "../io.js";
import { aliasKeys, integer, isoDate, jsonObject, messageType, parseOptions, stripUndefined } from "../options.js";

export interface GenerateOptions {
  types: MessageType[];
  userId?: string;
  event?: string;
  properties?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  now?: Date;
  seed?: number;
  out?: string;
  pretty: boolean;
  aliasKeys: AliasKeys;
}

/** Prints example messages: NDJSON by default, indented JSON with `pretty`. */
export async function generate(options: GenerateOptions, io: CliIo): Promise<number> {
  const messages = buildExamples(options.types.length > 0 ? options.types : MESSAGE_TYPES, {
    ...(options.now ? { now: options.now } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.userId !== undefined ? { userId: options.userId } : {}),
    ...(options.event !== undefined ? { event: options.event } : {}),
    ...(options.properties ? { properties: options.properties } : {}),
    ...(options.traits ? { traits: options.traits } : {}),
    aliasKeys: options.aliasKeys,
  });
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
  userId: z.string().optional(),
  event: z.string().min(1).optional(),
  properties: jsonObject("--properties").optional(),
  traits: jsonObject("--traits").optional(),
  now: isoDate("--now").optional(),
  seed: integer("--seed", 0, 2 ** 32 - 1).optional(),
  out: z.string().optional(),
  pretty: z.boolean().default(false),
  aliasKeys: aliasKeys.default("spec"),
});

export function registerGenerate(program: Command, context: CommandContext): void {
  program
    .command("generate")
    .description("print example messages of every type (page screen identify track alias group delete) as NDJSON")
    .argument("[types...]", `message types to print (default: all): ${MESSAGE_TYPES.join(", ")}`)
    .option("--user-id <id>", "userId of every example")
    .option("--event <name>", "event name of the track example")
    .option("--properties <json>", "properties of the page and track examples (a JSON object)")
    .option("--traits <json>", "traits of the identify and group examples (a JSON object)")
    .option("--now <iso>", "timestamp of every example (default: now)")
    .option("--seed <n>", "seed for the random choices (same seed and --now, same output)")
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
