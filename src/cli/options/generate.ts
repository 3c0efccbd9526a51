import { exampleOptions } from "./example.js";
import type { OptionSpec } from "./spec.js";

const ALIAS_KEYS_HELP = "alias keys: spec ('Previous ID', 'User ID') or camel (previousId, userId)";

export const GENERATE_OPTIONS = [
  ...exampleOptions(),
  { key: "out", flag: "--out", short: "-o", arg: "<file>", kind: "string", help: "write to a file instead of stdout" },
  { key: "pretty", flag: "--pretty", kind: "switch", default: false, help: "indented JSON instead of NDJSON" },
  { key: "aliasKeys", flag: "--alias-keys", arg: "<style>", kind: "aliasKeys", default: "spec", help: ALIAS_KEYS_HELP },
] as const satisfies readonly OptionSpec[];

export const DEMO_OPTIONS = [
  { key: "verbose", flag: "--verbose", kind: "switch", default: false, help: "print each message's full body" },
  { key: "json", flag: "--json", kind: "switch", default: false, help: "one JSON object per line on stdout" },
  { key: "aliasKeys", flag: "--alias-keys", arg: "<style>", kind: "aliasKeys", default: "spec", help: ALIAS_KEYS_HELP },
] as const satisfies readonly OptionSpec[];
