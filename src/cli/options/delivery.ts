import { SECRETS_OPTIONS } from "./signing.js";
import { withHelp, type OptionsOf, type OptionSpec } from "./spec.js";

const CONFIG_DEFAULT = "./webhook-cli.json, when present";

/**
 * The delivery flags shared by send, replay, audience sync and serve: where
 * to deliver, how to sign, and the engine's timeout, retry window and CAs.
 */
export const DELIVERY_OPTIONS = [
  { key: "urls", flag: "--url", short: "-u", arg: "<url>", kind: "list", help: "webhook URL (repeatable, at most 5; replaces the config's webhooks)" },
  { key: "headers", flag: "--header", arg: "<header>", kind: "list", help: "static header 'Name: value' for the --url targets (repeatable)" },
  ...withHelp(SECRETS_OPTIONS, {
    secrets: "shared secret to sign with (repeatable, for key rotation: standard, svix and stripe sign with each, the others with the first)",
  }),
  {
    key: "scheme",
    flag: "--scheme",
    arg: "<name>",
    kind: "scheme",
    shownDefault: "default (X-Signature), or each webhook's scheme in the config",
    help: "signature scheme: default, standard, svix, github, stripe, shopify, slack or twilio (docs/schemes.md)",
  },
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
  {
    key: "retryRules",
    flag: "--retry-rules",
    arg: "<rules>",
    kind: "retryRules",
    shownDefault: "destination",
    help: "retry schedule: the destination's, or standard (Standard Webhooks': 5s, 5m, 30m, 2h, 5h, 10h, 14h, 20h, 24h; 15s per attempt)",
  },
  { key: "ca", flag: "--ca", arg: "<file>", kind: "list", help: "also trust this CA certificate (PEM; repeatable)" },
  { key: "userAgent", flag: "--user-agent", arg: "<ua>", kind: "string", nonEmpty: true, shownDefault: "Segment.io/1.0", help: "User-Agent header" },
] as const satisfies readonly OptionSpec[];

export type DeliveryFlags = OptionsOf<typeof DELIVERY_OPTIONS>;
