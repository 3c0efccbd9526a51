import type { OptionSpec } from "./spec.js";
import { SECRET_ENV } from "../../config/secret-env.js";

/**
 * The secrets a signature scheme signs or verifies with, repeatable for key rotation
 * (docs/schemes.md#key-rotation): shared by the commands that take several.
 */
export const SECRETS_OPTIONS = [
  {
    key: "secrets",
    flag: "--secret",
    short: "-s",
    arg: "<secret>",
    kind: "list",
    readsEnv: SECRET_ENV,
    help: "shared secret (repeatable: any of several is accepted, for key rotation)",
  },
  { key: "secretFiles", flag: "--secret-file", arg: "<file>", kind: "list", help: "read a secret from a file, one trailing newline stripped (repeatable)" },
] as const satisfies readonly OptionSpec[];

export const SCHEME_HELP = "signature scheme: default (X-Signature), standard, svix, github, stripe, shopify, slack or twilio (docs/schemes.md)";

/** How a receiver verifies (listen, inspect): the scheme required or recognised, the secrets, the clock's tolerance. */
export const RECEIVER_SIGNING_OPTIONS = [
  {
    key: "scheme",
    flag: "--scheme",
    arg: "<name>",
    kind: "scheme",
    shownDefault: "each recognised by its signature header",
    help: `require this ${SCHEME_HELP}`,
  },
  ...SECRETS_OPTIONS,
  {
    key: "toleranceMs",
    flag: "--tolerance",
    arg: "<duration>",
    kind: "duration",
    shownDefault: "the scheme's: 5m, stripe 300s",
    help: "how far a signed timestamp may be from the clock before the signature is stale",
  },
] as const satisfies readonly OptionSpec[];
