import type { Command } from "commander";
import { z } from "zod";
import type { ExampleOptions } from "../messages/examples.js";
import { integer, isoDate, jsonObject } from "./options.js";

/** The overrides of a generated example, shared by `generate` and `send --type`. */
export type ExampleFlags = Pick<ExampleOptions, "userId" | "event" | "properties" | "traits" | "now" | "seed">;

/** Each override's key and flag, in the order help lists them. */
export const EXAMPLE_FLAGS: readonly { key: keyof ExampleFlags; flag: string }[] = [
  { key: "userId", flag: "--user-id" },
  { key: "event", flag: "--event" },
  { key: "properties", flag: "--properties" },
  { key: "traits", flag: "--traits" },
  { key: "now", flag: "--now" },
  { key: "seed", flag: "--seed" },
];

export const exampleOptionsShape = {
  userId: z.string().optional(),
  event: z.string().min(1).optional(),
  properties: jsonObject("--properties").optional(),
  traits: jsonObject("--traits").optional(),
  now: isoDate("--now").optional(),
  seed: integer("--seed", 0, 2 ** 32 - 1).optional(),
};

/** Declares the override flags; `scope` prefixes each help text (e.g. "with --type: "). */
export function addExampleOptions(command: Command, scope = ""): Command {
  return command
    .option("--user-id <id>", `${scope}userId of the example${scope ? "" : "s"}`)
    .option("--event <name>", `${scope}event name of the track example`)
    .option("--properties <json>", `${scope}properties of the page and track examples (a JSON object)`)
    .option("--traits <json>", `${scope}traits of the identify and group examples (a JSON object)`)
    .option("--now <iso>", `${scope}timestamp of the example${scope ? "" : "s"} (default: now)`)
    .option("--seed <n>", `${scope}seed for the random choices (same seed and --now, same output)`);
}
