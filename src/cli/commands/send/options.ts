import { MESSAGE_TYPES } from "../../../messages/names.js";
import { ACTIONS_OPTIONS } from "../../options/actions.js";
import { DELIVERY_OPTIONS } from "../../options/delivery.js";
import { FUNCTION_OPTIONS } from "../../options/function.js";
import { exampleOptions } from "../../options/example.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

export const SEND_OPTIONS = [
  // Parsed first: with a bad --type, that is the error reported.
  {
    key: "type",
    flag: "--type",
    arg: "<type>",
    kind: "messageType",
    help: `generate one example message of this type and send it (instead of a file): ${MESSAGE_TYPES.join(", ")}`,
  },
  ...DELIVERY_OPTIONS,
  ...FUNCTION_OPTIONS,
  ...ACTIONS_OPTIONS,
  { key: "aliasKeys", flag: "--alias-keys", arg: "<style>", kind: "aliasKeys", help: "alias keys of --type alias: spec or camel" },
  ...exampleOptions("with --type: "),
  { key: "allowEmpty", flag: "--allow-empty", kind: "switch", help: "exit 0 when the input holds no message (exit 2 otherwise)" },
  { key: "junit", flag: "--junit", arg: "<file>", kind: "string", nonEmpty: true, help: "write a JUnit XML report, one test case per message" },
  { key: "dryRun", flag: "--dry-run", kind: "switch", help: "print the exact requests (headers, signature, body); send nothing" },
  { key: "verbose", flag: "--verbose", kind: "switch", help: "show each attempt's request and response (stderr)" },
  { key: "json", flag: "--json", kind: "switch", help: "one JSON object per message on stdout, then a summary" },
  {
    key: "raw",
    flag: "--raw",
    kind: "switch",
    help: "send each body exactly as read, even when it is not a valid message or not JSON (validation only warns)",
  },
] as const satisfies readonly OptionSpec[];

export type SendFlags = OptionsOf<typeof SEND_OPTIONS>;
