import { ALIAS_KEYS_HELP } from "../../options/example.js";
import { SCHEME_HELP } from "../../options/signing.js";
import { FUNCTION_OPTIONS } from "../../options/function.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

export const DEMO_OPTIONS = [
  { key: "scheme", flag: "--scheme", arg: "<name>", kind: "scheme", default: "default", help: `sign and verify by this ${SCHEME_HELP}` },
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
