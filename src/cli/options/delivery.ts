import type { OptionsOf, OptionSpec } from "./spec.js";

/** Read by the secret resolver (src/config/secret.ts SECRET_ENV); spelled here so help loads nothing more. */
export const SECRET_ENV = "WEBHOOK_SECRET";
const CONFIG_DEFAULT = "./webhook-cli.json, when present";

/**
 * The delivery flags shared by send, replay, audience sync and serve: where
 * to deliver, how to sign, and the engine's timeout, retry window and CAs.
 */
export const DELIVERY_OPTIONS = [
  { key: "urls", flag: "--url", short: "-u", arg: "<url>", kind: "list", help: "webhook URL (repeatable, at most 5; replaces the config's webhooks)" },
  { key: "headers", flag: "--header", arg: "<header>", kind: "list", help: "static header 'Name: value' for the --url targets (repeatable)" },
  { key: "secret", flag: "--secret", short: "-s", arg: "<secret>", kind: "string", readsEnv: SECRET_ENV, help: "shared secret: sign with X-Signature" },
  { key: "secretFile", flag: "--secret-file", arg: "<file>", kind: "string", help: "read the shared secret from a file (one trailing newline stripped)" },
  { key: "config", flag: "--config", arg: "<file>", kind: "string", shownDefault: CONFIG_DEFAULT, help: "destination settings file" },
  {
    key: "timeoutMs",
    flag: "--timeout",
    arg: "<duration>",
    kind: "duration",
    shownDefault: "5s",
    help: "deadline per attempt for the response status, connect and TLS included; 10s under --destination actions unless given",
  },
  {
    key: "retryWindowMs",
    flag: "--retry-window",
    arg: "<duration>",
    kind: "durationOrZero",
    shownDefault: "4h",
    help: "no retry starts later than this after the first attempt (0 = no retries)",
  },
  { key: "ca", flag: "--ca", arg: "<file>", kind: "list", help: "also trust this CA certificate (PEM; repeatable)" },
  { key: "userAgent", flag: "--user-agent", arg: "<ua>", kind: "string", nonEmpty: true, shownDefault: "Segment.io/1.0", help: "User-Agent header" },
] as const satisfies readonly OptionSpec[];

export type DeliveryFlags = OptionsOf<typeof DELIVERY_OPTIONS>;
