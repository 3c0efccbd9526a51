import { UsageError } from "../../errors.js";
import { resolveSecret, SECRET_ENV, type SecretInput } from "../../config/secret.js";
import type { Output } from "../terminal/output.js";

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

/**
 * Said once, on stderr, when no secret is configured at all (the only case in
 * which nothing is signed or verified); `config` when a config file could hold one.
 */
export function warnUnsigned(output: Pick<Output, "warn">, what: string, { config }: { config: boolean }): void {
  const sources = config ? `--secret, --secret-file, $${SECRET_ENV} or the config's sharedSecret` : `--secret, --secret-file or $${SECRET_ENV}`;
  output.warn(`no secret given (${sources}): ${what}`);
}
