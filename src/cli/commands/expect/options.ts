import { MESSAGE_TYPES } from "../../../messages/names.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

export const EXPECT_OPTIONS = [
  {
    key: "from",
    flag: "--from",
    arg: "<url|file>",
    kind: "string",
    nonEmpty: true,
    required: true,
    help: "listen's control API: its URL, or the --ready-file listen wrote (line 2)",
  },
  { key: "type", flag: "--type", arg: "<type>", kind: "messageType", help: `message type: ${MESSAGE_TYPES.join(", ")}` },
  { key: "event", flag: "--event", arg: "<name>", kind: "string", nonEmpty: true, help: "a track's event name" },
  { key: "userId", flag: "--user-id", arg: "<id>", kind: "string", help: "userId (else anonymousId) of the message" },
  { key: "path", flag: "--path", arg: "<path>", kind: "string", nonEmpty: true, help: "request path (without the query string unless it has one)" },
  { key: "method", flag: "--method", arg: "<method>", kind: "string", nonEmpty: true, help: "POST, PUT or PATCH" },
  { key: "kind", flag: "--kind", arg: "<kind>", kind: "string", nonEmpty: true, help: "what the body is: message, batch, payload, none, invalid" },
  { key: "verdict", flag: "--verdict", arg: "<verdict>", kind: "string", default: "valid", help: "valid, invalid, or any (count every matching request)" },
  { key: "count", flag: "--count", arg: "<n>", kind: "integer", min: 1, default: "1", help: "at least this many matching requests" },
  {
    key: "since",
    flag: "--since",
    arg: "<time>",
    kind: "string",
    nonEmpty: true,
    shownDefault: "when listen started",
    help: "count requests from this time: ISO 8601, or a duration ago (5m)",
  },
  { key: "timeoutMs", flag: "--timeout", arg: "<duration>", kind: "duration", default: "10s", help: "how long to wait for them (with --ready: for listen)" },
  {
    key: "ready",
    flag: "--ready",
    kind: "switch",
    default: false,
    help: "only wait until listen is listening (--from's ready file written, its control API answering), then exit 0",
  },
  { key: "pid", flag: "--pid", arg: "<pid>", kind: "integer", min: 1, help: "with --ready: listen's process id ($!): exit 2 at once if it exited" },
  { key: "json", flag: "--json", kind: "switch", default: false, help: "one JSON object on stdout: the outcome and what arrived" },
] as const satisfies readonly OptionSpec[];

export type ExpectFlags = OptionsOf<typeof EXPECT_OPTIONS>;
