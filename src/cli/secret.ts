import { UsageError } from "../errors.js";
import { resolveSecret, SECRET_ENV, type SecretInput } from "../settings.js";
import type { Output } from "./output.js";

/** The command line takes the secret one way at a time. */
export function checkOneSecretFlag(options: Pick<SecretInput, "secret" | "secretFile">): void {
  if (options.secret !== undefined && options.secretFile !== undefined) {
    throw new UsageError("give either --secret or --secret-file, not both", { flag: "--secret-file" });
  }
}

/** `listen`'s secret: the same resolver as the senders', without a config file. */
export function resolveListenSecret(input: SecretInput): string | undefined {
  checkOneSecretFlag(input);
  return resolveSecret(input);
}

/** Said once, on stderr, when nothing is configured: sending unsigned is then deliberate. */
export function warnUnsigned(output: Pick<Output, "warn">, what: string): void {
  output.warn(`no secret (--secret, --secret-file, ${SECRET_ENV} or the config's sharedSecret): ${what}`);
}
