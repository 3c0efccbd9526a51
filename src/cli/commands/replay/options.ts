import { MESSAGE_TYPES } from "../../../messages/names.js";
import { ACTIONS_OPTIONS } from "../../options/actions.js";
import { DELIVERY_OPTIONS } from "../../options/delivery.js";
import { FUNCTION_OPTIONS } from "../../options/function.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

/** The dispatcher's default; test/unit/option-tables.test.ts checks the help states it. */
const REPLAY_CONCURRENCY_DEFAULT = "64";
export const REPLAY_CONCURRENCY_HELP =
  "messages in flight at once; one user's messages stay in file order. 64 keeps a receiver busy (replay is for load); lower it for a fragile one";

export const REPLAY_OPTIONS = [
  ...DELIVERY_OPTIONS,
  ...FUNCTION_OPTIONS,
  ...ACTIONS_OPTIONS,
  {
    key: "concurrency",
    flag: "--concurrency",
    short: "-c",
    arg: "<n>",
    kind: "integer",
    min: 1,
    max: 10_000,
    shownDefault: REPLAY_CONCURRENCY_DEFAULT,
    help: REPLAY_CONCURRENCY_HELP,
  },
  { key: "rate", flag: "--rate", arg: "<n>", kind: "number", min: 0.001, max: 1_000_000, help: "at most this many messages started per second" },
  {
    key: "speed",
    flag: "--speed",
    arg: "<x>",
    kind: "number",
    min: 0.001,
    max: 1_000_000,
    help: "keep the recorded spacing (receivedAt, else timestamp), x times faster",
  },
  {
    key: "types",
    flag: "--type",
    arg: "<type>",
    kind: "messageTypes",
    help: `filter: replay only the recorded messages of this type, skip the rest (repeatable): ${MESSAGE_TYPES.join(", ")}`,
  },
  { key: "fromLine", flag: "--from-line", arg: "<n>", kind: "integer", min: 1, help: "start at this line (inclusive), e.g. to resume an interrupted replay" },
  { key: "skipInvalid", flag: "--skip-invalid", kind: "switch", help: "send the valid lines even when some are bad (the bad ones are listed)" },
  { key: "raw", flag: "--raw", kind: "switch", help: "send lines that are not known messages (or not JSON) as read, with a warning, instead of refusing them" },
  {
    key: "deadLetter",
    flag: "--dead-letter",
    arg: "<file>",
    kind: "string",
    help: "append every message not delivered to this file (replay accepts it again)",
  },
  {
    key: "allowEmpty",
    flag: "--allow-empty",
    kind: "switch",
    help: "exit 0 when there is nothing to send (empty input, --from-line past the end, nothing selected); exit 2 otherwise",
  },
  { key: "verbose", flag: "--verbose", kind: "switch", help: "show each attempt's request and response (stderr)" },
  // Regression testing: selectors, results, comparison. Parsed further in ./regress.ts.
  { key: "lines", flag: "--line", arg: "<n|a-b>", kind: "list", help: "only replay this line, or lines A to B (repeatable)" },
  { key: "messageIds", flag: "--message-id", arg: "<id>", kind: "list", help: "only replay the message with this messageId (repeatable)" },
  { key: "userIds", flag: "--user-id", arg: "<id>", kind: "list", help: "only replay this user's messages (the per-user order key; repeatable)" },
  { key: "shard", flag: "--shard", arg: "<k/n>", kind: "string", help: "only replay share K of N, split by user (N CI jobs replay one log between them)" },
  {
    key: "results",
    flag: "--results",
    arg: "<file>",
    kind: "string",
    help: "append one line per message with each URL's answer (status, content-type, body), in input order",
  },
  {
    key: "compare",
    flag: "--compare",
    arg: "<file>",
    kind: "string",
    help: "compare the answers with an earlier --results file (or a listen --forward-to recording); exit 1 on a change",
  },
  { key: "ignore", flag: "--ignore", arg: "<path>", kind: "list", help: "with --compare: leave this JSON body path out, e.g. '$.requestId' (repeatable)" },
  { key: "expectStatus", flag: "--expect-status", arg: "<list>", kind: "string", help: "an answer outside this list is a failure, e.g. 2xx or 200,202" },
  {
    key: "dryRun",
    flag: "--dry-run",
    kind: "switch",
    help: "print the exact request (headers, signature, body) of each message to each --url; send nothing (without a URL, or with --quiet: counts only)",
  },
  { key: "quiet", flag: "--quiet", kind: "switch", help: "with --dry-run: print only the counts, not the requests" },
  { key: "junit", flag: "--junit", arg: "<file>", kind: "string", help: "write a JUnit XML report, one test case per message" },
  { key: "json", flag: "--json", kind: "switch", help: "one JSON object per failed message on stdout, then a summary" },
] as const satisfies readonly OptionSpec[];

export type ReplayFlags = OptionsOf<typeof REPLAY_OPTIONS>;
