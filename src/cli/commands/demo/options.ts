import { ALIAS_KEYS_HELP } from "../../options/example.js";
import { FUNCTION_OPTIONS } from "../../options/function.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

export const DEMO_OPTIONS = [
  { key: "verbose", flag: "--verbose", kind: "switch", default: false, help: "print each message's full body" },
  { key: "json", flag: "--json", kind: "switch", default: false, help: "one JSON object per line on stdout" },
  { key: "aliasKeys", flag: "--alias-keys", arg: "<style>", kind: "aliasKeys", default: "spec", help: ALIAS_KEYS_HELP },
  {
    ...FUNCTION_OPTIONS[0],
    help: "send each example to this destination function instead; its requests go to the demo's receiver, shown verified",
  },
  FUNCTION_OPTIONS[1],
] as const satisfies readonly OptionSpec[];

export type DemoFlags = OptionsOf<typeof DEMO_OPTIONS>;
