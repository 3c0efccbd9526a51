import type { OptionsOf, OptionSpec } from "./spec.js";
import { SECRET_ENV } from "./delivery.js";

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
    help: "shared secret (repeatable: several are accepted, for key rotation)",
  },
  { key: "secretFiles", flag: "--secret-file", arg: "<file>", kind: "list", help: "read a secret from a file, one trailing newline stripped (repeatable)" },
] as const satisfies readonly OptionSpec[];

export type SecretsFlags = OptionsOf<typeof SECRETS_OPTIONS>;

export const SCHEME_HELP = "signature scheme: default (X-Signature), standard, svix, github, stripe, shopify, slack or twilio (docs/schemes.md)";
