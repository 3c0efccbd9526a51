import { RECEIVER_SIGNING_OPTIONS } from "../../options/signing.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

export const INSPECT_OPTIONS = [
  {
    key: "port",
    flag: "--port",
    short: "-p",
    arg: "<n>",
    kind: "integer",
    min: 0,
    max: 65535,
    default: "0",
    help: "port of the inspector page (0 = any free port)",
  },
  // With a secret, the recorded signatures are checked again (each at the time it arrived) and what is resent is signed.
  ...RECEIVER_SIGNING_OPTIONS,
  {
    key: "strict",
    flag: "--strict",
    kind: "switch",
    default: false,
    help: "judge messages only, as listen --strict: payloads, null batch elements and empty bodies are errors, and so are unknown message keys",
  },
  { key: "json", flag: "--json", kind: "switch", default: false, help: "one JSON object per line on stdout" },
] as const satisfies readonly OptionSpec[];

export type InspectFlags = OptionsOf<typeof INSPECT_OPTIONS>;
