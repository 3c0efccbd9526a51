import { ALIAS_KEYS_HELP, exampleOptions } from "../../options/example.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

export const GENERATE_OPTIONS = [
  ...exampleOptions(),
  { key: "out", flag: "--out", short: "-o", arg: "<file>", kind: "string", help: "write to a file instead of stdout" },
  { key: "pretty", flag: "--pretty", kind: "switch", default: false, help: "indented JSON instead of NDJSON" },
  { key: "aliasKeys", flag: "--alias-keys", arg: "<style>", kind: "aliasKeys", default: "spec", help: ALIAS_KEYS_HELP },
] as const satisfies readonly OptionSpec[];

export type GenerateFlags = OptionsOf<typeof GENERATE_OPTIONS>;
