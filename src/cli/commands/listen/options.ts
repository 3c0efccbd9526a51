import { DEFAULT_MAX_CONNECTIONS } from "../../../util/http-limits.js";
import { SECRET_ENV } from "../../options/delivery.js";
import type { OptionsOf, OptionSpec } from "../../options/spec.js";

export const LISTEN_OPTIONS = [
  { key: "port", flag: "--port", short: "-p", arg: "<n>", kind: "integer", min: 0, max: 65535, default: "8080", help: "port to listen on (0 = any free port)" },
  { key: "host", flag: "--host", arg: "<addr>", kind: "string", nonEmpty: true, default: "127.0.0.1", help: "address to listen on" },
  { key: "secret", flag: "--secret", short: "-s", arg: "<secret>", kind: "string", readsEnv: SECRET_ENV, help: "shared secret to verify X-Signature" },
  { key: "secretFile", flag: "--secret-file", arg: "<file>", kind: "string", help: "read the shared secret from a file (one trailing newline stripped)" },
  { key: "record", flag: "--record", arg: "<file>", kind: "string", nonEmpty: true, help: "append every request to an NDJSON recording (replayable)" },
  { key: "respond", flag: "--respond", arg: "<status>", kind: "status", default: "200", help: "status for valid requests" },
  { key: "delayMs", flag: "--delay", arg: "<duration>", kind: "duration", help: "hold every answer this long, e.g. 250ms" },
  { key: "failFirst", flag: "--fail-first", arg: "<n>", kind: "integer", min: 0, help: "answer the first N requests with --fail-status" },
  { key: "failRate", flag: "--fail-rate", arg: "<p>", kind: "number", min: 0, max: 1, help: "answer with --fail-status with probability P (0-1)" },
  { key: "failStatus", flag: "--fail-status", arg: "<status>", kind: "status", default: "503", help: "status of injected failures" },
  { key: "seed", flag: "--seed", arg: "<n>", kind: "integer", min: 0, max: 2 ** 32 - 1, help: "seed for --fail-rate (same seed, same failures)" },
  { key: "script", flag: "--script", arg: "<list>", kind: "script", help: "answers request by request, then repeat the last: e.g. 503,503,timeout,200,drop" },
  { key: "tlsCert", flag: "--tls-cert", arg: "<file>", kind: "string", help: "serve HTTPS with this certificate (PEM)" },
  { key: "tlsKey", flag: "--tls-key", arg: "<file>", kind: "string", help: "the certificate's private key (PEM)" },
  { key: "count", flag: "--count", arg: "<n>", kind: "integer", min: 1, help: "exit after N requests" },
  { key: "exitAfterMs", flag: "--exit-after", arg: "<duration>", kind: "duration", help: "exit after this long, e.g. 30s" },
  { key: "strict", flag: "--strict", kind: "switch", default: false, help: "unknown message keys are errors, not warnings" },
  { key: "junit", flag: "--junit", arg: "<file>", kind: "string", nonEmpty: true, help: "write a JUnit XML report, one test case per request" },
  { key: "readyFile", flag: "--ready-file", arg: "<file>", kind: "string", nonEmpty: true, help: "write the URL to this file once listening (GET /health also answers 200)" },
  { key: "json", flag: "--json", kind: "switch", default: false, help: "one JSON object per line on stdout" },
  { key: "verbose", flag: "--verbose", kind: "switch", default: false, help: "print each request's full body" },
  { key: "maxConnections", flag: "--max-connections", arg: "<n>", kind: "integer", min: 1, max: 1_000_000, shownDefault: String(DEFAULT_MAX_CONNECTIONS), help: "open connections at once; more are refused" },
  { key: "forwardTo", flag: "--forward-to", arg: "<url>", kind: "string", nonEmpty: true, help: "relay each request (exact bytes and headers) to your app and answer with its response" },
  { key: "forwardTimeoutMs", flag: "--forward-timeout", arg: "<duration>", kind: "duration", default: "5s", help: "how long the app may take before the sender gets 504" },
  { key: "ui", flag: "--ui", kind: "switch", default: false, help: "serve the inspector page on 127.0.0.1 (--ui-port)" },
  { key: "uiPort", flag: "--ui-port", arg: "<n>", kind: "integer", min: 0, max: 65535, default: "4040", help: "port of the inspector page (0 = any free port)" },
  { key: "uiKeep", flag: "--ui-keep", arg: "<n>", kind: "integer", min: 1, max: 1_000_000, default: "1000", help: "requests the inspector keeps in memory" },
  { key: "uiHistoryMb", flag: "--ui-history-mb", arg: "<n>", kind: "integer", min: 1, max: 65_536, default: "64", help: "memory the inspector's requests may take (bodies, kept answers); the oldest go first" },
] as const satisfies readonly OptionSpec[];

export type ListenFlags = OptionsOf<typeof LISTEN_OPTIONS>;
