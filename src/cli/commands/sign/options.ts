import type { OptionsOf, OptionSpec } from "../../options/spec.js";
import { SCHEME_HELP, SECRETS_OPTIONS } from "../../options/signing.js";

export const SIGN_OPTIONS = [
  { key: "scheme", flag: "--scheme", arg: "<name>", kind: "scheme", required: true, help: SCHEME_HELP },
  ...SECRETS_OPTIONS,
  {
    key: "url",
    flag: "--url",
    arg: "<url>",
    kind: "string",
    nonEmpty: true,
    help: "the full URL the request is sent to (twilio signs it); --curl's when not given",
  },
  {
    key: "timestamp",
    flag: "--timestamp",
    arg: "<seconds>",
    kind: "integer",
    min: 0,
    shownDefault: "now",
    help: "the time signed, Unix seconds (timestamped schemes)",
  },
  { key: "id", flag: "--id", arg: "<id>", kind: "string", nonEmpty: true, shownDefault: "a new one", help: "the message id (standard, svix, github, shopify)" },
  {
    key: "event",
    flag: "--event",
    arg: "<name>",
    kind: "string",
    nonEmpty: true,
    help: "the event header's value (github: X-GitHub-Event; shopify: X-Shopify-Topic)",
  },
  {
    key: "contentType",
    flag: "--content-type",
    arg: "<type>",
    kind: "string",
    nonEmpty: true,
    default: "application/json",
    help: "the body's Content-Type (twilio signs a form by its parameters, any other body by its SHA-256)",
  },
  { key: "legacy", flag: "--legacy", kind: "switch", default: false, help: "also the scheme's older header (github: X-Hub-Signature, SHA-1)" },
  { key: "curl", flag: "--curl", arg: "<url>", kind: "string", nonEmpty: true, help: "print a curl command that sends the signed request to this URL" },
  { key: "json", flag: "--json", kind: "switch", default: false, help: "one JSON object on stdout: the headers, URL, id and timestamp" },
] as const satisfies readonly OptionSpec[];

export type SignFlags = OptionsOf<typeof SIGN_OPTIONS>;
