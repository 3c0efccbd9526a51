import type { OptionsOf, OptionSpec } from "./spec.js";

/** The help of `--alias-keys` where it chooses how generated alias messages are keyed (generate, demo). */
export const ALIAS_KEYS_HELP = "alias keys: spec ('Previous ID', 'User ID') or camel (previousId, userId)";

/**
 * The overrides of a generated example, shared by `generate` and `send --type`;
 * `scope` prefixes each help text (e.g. "with --type: ").
 */
export function exampleOptions(scope = "") {
  const s = scope ? "" : "s";
  return [
    { key: "userId", flag: "--user-id", arg: "<id>", kind: "string", help: `${scope}userId of the example${s}` },
    { key: "event", flag: "--event", arg: "<name>", kind: "string", nonEmpty: true, help: `${scope}event name of the track example` },
    { key: "properties", flag: "--properties", arg: "<json>", kind: "jsonObject", help: `${scope}properties of the page and track examples (a JSON object)` },
    { key: "traits", flag: "--traits", arg: "<json>", kind: "jsonObject", help: `${scope}traits of the identify and group examples (a JSON object)` },
    { key: "now", flag: "--now", arg: "<iso>", kind: "date", shownDefault: "now", help: `${scope}timestamp of the example${s}` },
    {
      key: "seed",
      flag: "--seed",
      arg: "<n>",
      kind: "integer",
      min: 0,
      max: 2 ** 32 - 1,
      help: `${scope}seed for the random choices (same seed and --now, same output)`,
    },
  ] as const satisfies readonly OptionSpec[];
}

type ExampleFlags = OptionsOf<ReturnType<typeof exampleOptions>>;

/** Each override's key and flag, in the order help lists them. */
export const EXAMPLE_FLAGS: readonly { key: keyof ExampleFlags; flag: string }[] = exampleOptions();
