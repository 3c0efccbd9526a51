import type { OptionsOf, OptionSpec } from "./spec.js";

/**
 * The delivery flags shared by send, replay, audience sync and serve: where
 * to deliver, how to sign, and the engine's timeout, retry window and CAs.
 */
export const DELIVERY_OPTIONS = [
  { key: "urls", flag: "--url", arg: "<url>", kind: "list", help: "webhook URL (repeatable, at most 5; replaces the config's webhooks)" },
  { key: "headers", flag: "--header", arg: "<header>", kind: "list", help: "static header 'Name: value' for the --url targets (repeatable)" },
  { key: "secret", flag: "--secret", arg: "<secret>", kind: "string", help: "shared secret: sign with X-Signature (or $WEBHOOK_SECRET)" },
  { key: "secretFile", flag: "--secret-file", arg: "<file>", kind: "string", help: "read the shared secret from a file (one trailing newline stripped)" },
  { key: "config", flag: "--config", arg: "<file>", kind: "string", help: "destination settings file (default ./webhook-cli.json when present)" },
  {
    key: "timeoutMs",
    flag: "--timeout",
    arg: "<duration>",
    kind: "duration",
    help: "deadline per attempt for the response status, connect and TLS included (default 5s)",
  },
  { key: "retryWindowMs", flag: "--retry-window", arg: "<duration>", kind: "duration", help: "no retry starts later than this after the first attempt (default 4h)" },
  { key: "ca", flag: "--ca", arg: "<file>", kind: "list", help: "also trust this CA certificate (PEM; repeatable)" },
  { key: "userAgent", flag: "--user-agent", arg: "<ua>", kind: "string", nonEmpty: true, help: "User-Agent header (default Segment.io/1.0)" },
] as const satisfies readonly OptionSpec[];

export type DeliveryFlags = OptionsOf<typeof DELIVERY_OPTIONS>;
