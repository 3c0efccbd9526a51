import { DEFAULT_SERVE_MAX_CONNECTIONS } from "../../../http/limits.js";
import { ACTIONS_OPTIONS, BATCH_WAIT_OPTION } from "../../options/actions.js";
import { DELIVERY_OPTIONS } from "../../options/delivery.js";
import { SERVE_FUNCTION_OPTIONS } from "../../options/function.js";
import { withHelp, type OptionsOf, type OptionSpec } from "../../options/spec.js";
import { TLS_OPTIONS } from "../../shared/tls-files.js";

const DEFAULT_SERVE_PORT = 8088;
const DEFAULT_STATE_DIR = ".webhook-cli";
/** The collector's default; test/unit/option-tables.test.ts checks the help states it. */
const SERVE_CONCURRENCY_DEFAULT = "64";
export const SERVE_CONCURRENCY_HELP = "deliveries in flight at once; as replay, enough to keep a receiver busy over keep-alive connections";

export const SERVE_OPTIONS = [
  {
    key: "port",
    flag: "--port",
    short: "-p",
    arg: "<n>",
    kind: "integer",
    min: 0,
    max: 65535,
    default: String(DEFAULT_SERVE_PORT),
    help: "port to listen on (0 = any free port)",
  },
  { key: "host", flag: "--host", arg: "<addr>", kind: "string", nonEmpty: true, default: "127.0.0.1", help: "address to listen on" },
  {
    key: "writeKey",
    flag: "--write-key",
    arg: "<key>",
    kind: "string",
    nonEmpty: true,
    help: "accept this write key (one source); without any source every key is accepted",
  },
  { key: "state", flag: "--state", arg: "<dir>", kind: "string", nonEmpty: true, default: DEFAULT_STATE_DIR, help: "directory of the durable queue (SQLite)" },
  { key: "memory", flag: "--memory", kind: "switch", help: "keep the queue in memory instead (nothing survives a restart)" },
  { key: "failed", flag: "--failed", kind: "switch", help: "print the messages given up (stored under --state) as JSON lines and exit" },
  ...withHelp(DELIVERY_OPTIONS, {
    config: "settings: sources, webhooks, sharedSecret, enabled, aliasKeys, userAgent, destination, batchWait",
    timeoutMs: "deadline per attempt; 10s under --destination actions unless given",
  }),
  ...SERVE_FUNCTION_OPTIONS,
  ...ACTIONS_OPTIONS,
  BATCH_WAIT_OPTION,
  { key: "aliasKeys", flag: "--alias-keys", arg: "<style>", kind: "aliasKeys", help: "alias keys of forwarded alias messages: spec or camel" },
  {
    key: "concurrency",
    flag: "--concurrency",
    short: "-c",
    arg: "<n>",
    kind: "integer",
    min: 1,
    max: 1024,
    shownDefault: SERVE_CONCURRENCY_DEFAULT,
    help: SERVE_CONCURRENCY_HELP,
  },
  { key: "strict", flag: "--strict", kind: "switch", help: "refuse a whole request (400) when one call in it is invalid, instead of dropping that call" },
  ...TLS_OPTIONS,
  {
    key: "allowOrigin",
    flag: "--allow-origin",
    arg: "<origin>",
    kind: "list",
    shownDefault: "any page",
    help: "only pages at this origin may post events, e.g. http://localhost:3000 (repeatable)",
  },
  { key: "readyFile", flag: "--ready-file", arg: "<file>", kind: "string", nonEmpty: true, help: "write the URL to this file once listening" },
  {
    key: "maxConnections",
    flag: "--max-connections",
    arg: "<n>",
    kind: "integer",
    min: 1,
    max: 1_000_000,
    shownDefault: String(DEFAULT_SERVE_MAX_CONNECTIONS),
    help: "open connections at once; more are answered 503 with Retry-After",
  },
  {
    key: "json",
    flag: "--json",
    kind: "switch",
    help: "JSON lines on stdout: listening, rejected (invalid calls dropped), unauthorized (wrong write key), delivery (messages given up), summary",
  },
] as const satisfies readonly OptionSpec[];

export type ServeFlags = OptionsOf<typeof SERVE_OPTIONS>;
