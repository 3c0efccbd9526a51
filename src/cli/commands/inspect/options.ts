import { SECRET_ENV } from "../../options/delivery.js";
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
  {
    key: "secret",
    flag: "--secret",
    short: "-s",
    arg: "<secret>",
    kind: "string",
    readsEnv: SECRET_ENV,
    help: "shared secret: checks the recorded X-Signatures again and signs what is resent",
  },
  { key: "secretFile", flag: "--secret-file", arg: "<file>", kind: "string", help: "read the shared secret from a file (one trailing newline stripped)" },
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
