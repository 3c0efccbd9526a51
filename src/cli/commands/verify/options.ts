import type { OptionsOf, OptionSpec } from "../../options/spec.js";
import { SCHEME_HELP, SECRETS_OPTIONS } from "../../options/signing.js";

export const VERIFY_OPTIONS = [
  { key: "scheme", flag: "--scheme", arg: "<name>", kind: "scheme", shownDefault: "recognised by the headers", help: SCHEME_HELP },
  ...SECRETS_OPTIONS,
  {
    key: "headers",
    flag: "--header",
    short: "-H",
    arg: "<header>",
    kind: "list",
    help: "a header of the request, 'Name: value', or @FILE of such lines (repeatable)",
  },
  { key: "url", flag: "--url", arg: "<url>", kind: "string", nonEmpty: true, help: "the full URL the sender sent the request to (twilio signs it)" },
  {
    key: "toleranceMs",
    flag: "--tolerance",
    arg: "<duration>",
    kind: "duration",
    shownDefault: "the scheme's: 5m, stripe 300s",
    help: "how far a signed timestamp may be from the clock",
  },
  {
    key: "now",
    flag: "--now",
    arg: "<iso>",
    kind: "date",
    shownDefault: "now",
    help: "the clock to hold the timestamp to (a recorded request: when it arrived)",
  },
  { key: "json", flag: "--json", kind: "switch", default: false, help: "one JSON object per scheme checked on stdout" },
] as const satisfies readonly OptionSpec[];

export type VerifyFlags = OptionsOf<typeof VERIFY_OPTIONS>;
