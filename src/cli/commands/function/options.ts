import { MESSAGE_TYPES } from "../../../messages/names.js";
import { SECRET_ENV } from "../../../config/secret-env.js";
import { exampleOptions } from "../../options/example.js";
import { FUNCTION_OPTIONS } from "../../options/function.js";
import { withHelp, type OptionsOf, type OptionSpec } from "../../options/spec.js";

export const FUNCTION_RUN_OPTIONS = [
  // Parsed first: with a bad --type, that is the error reported.
  {
    key: "type",
    flag: "--type",
    arg: "<type>",
    kind: "messageType",
    help: `generate one example event of this type and run the destination function on it (instead of EVENTS): ${MESSAGE_TYPES.join(", ")}`,
  },
  {
    key: "request",
    flag: "--request",
    arg: "<file>",
    kind: "string",
    nonEmpty: true,
    help: 'a source function\'s test request: {"payload": {"body", "headers", "queryParameters" | "url"}, "settings"} (the functions library\'s webhook-examples format)',
  },
  ...withHelp([FUNCTION_OPTIONS[1], FUNCTION_OPTIONS[2]] as const, {
    settings: "the function's settings: a JSON object, or a file holding one (replaces a --request file's settings)",
    egress: "send every request the function makes to this URL instead (the URL it asked for in X-Function-Fetch-Url)",
  }),
  {
    key: "secret",
    flag: "--secret",
    short: "-s",
    arg: "<secret>",
    kind: "string",
    readsEnv: SECRET_ENV,
    help: "with --function-egress: sign each request sent there with X-Signature, so a listen with this secret takes it as valid",
  },
  { key: "secretFile", flag: "--secret-file", arg: "<file>", kind: "string", help: "read the secret from a file (one trailing newline stripped)" },
  {
    key: "batchSize",
    flag: "--batch-size",
    arg: "<n>",
    kind: "integer",
    min: 1,
    max: 400,
    shownDefault: "20 when the function has onBatch",
    help: "events per onBatch call (the service's default is 20, at most 400); 1 calls the single-event handlers",
  },
  ...exampleOptions("with --type: "),
  {
    key: "json",
    flag: "--json",
    kind: "switch",
    help: "one JSON object per invocation on stdout (its return, error, console, fetches, messages), then a summary",
  },
] as const satisfies readonly OptionSpec[];

export type FunctionRunFlags = OptionsOf<typeof FUNCTION_RUN_OPTIONS>;
