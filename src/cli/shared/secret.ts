import { SecretFormatError, UsageError } from "../../errors.js";
import { resolveSecrets, SECRET_ENV, type SecretInput } from "../../config/secret.js";
import { SignatureChecker, type SignatureSettings } from "../../receiver/signature-check.js";
import type { SchemeName } from "../../signing/schemes.js";
import type { Output } from "../terminal/output.js";
import type { CliIo } from "../terminal/io.js";

/** The command line takes the secret one way at a time. */
export function checkOneSecretFlag(options: Pick<SecretInput, "secret" | "secretFile">): void {
  if (options.secret !== undefined && options.secretFile !== undefined) {
    throw new UsageError("give either --secret or --secret-file, not both", { flag: "--secret-file" });
  }
}

/** The receivers' signing flags (listen, inspect): the scheme, the secrets, the tolerance, the public URL. */
export interface ReceiverSigningFlags {
  scheme?: SchemeName | undefined;
  secrets?: string[] | undefined;
  secretFiles?: string[] | undefined;
  toleranceMs?: number | undefined;
  publicUrl?: string | undefined;
}

/**
 * How listen and inspect verify (docs/schemes.md): each `--secret` and `--secret-file` (else
 * $WEBHOOK_SECRET), the scheme named or recognition, `--tolerance`, `--public-url`, as the check
 * they judge with, built once (its settings sign their resends). Checked now: a secret the named
 * scheme cannot take, or a public URL that is no http(s) URL, is bad input (exit 2).
 */
export function receiverChecker(flags: ReceiverSigningFlags, io: Pick<CliIo, "cwd" | "env">, secure = false): SignatureChecker {
  const secrets = resolveSecrets({ secrets: flags.secrets, secretFiles: flags.secretFiles, cwd: io.cwd, env: io.env });
  if (flags.publicUrl !== undefined && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/i.test(flags.publicUrl)) {
    throw new UsageError(`expected the http:// or https:// URL senders use, up to the path (no query), got ${JSON.stringify(flags.publicUrl)}`, {
      flag: "--public-url",
    });
  }
  const settings: SignatureSettings = {
    scheme: flags.scheme,
    secrets,
    toleranceSeconds: flags.toleranceMs === undefined ? undefined : flags.toleranceMs / 1000,
    publicUrl: flags.publicUrl,
    secure,
  };
  try {
    return new SignatureChecker(settings);
  } catch (error) {
    if (error instanceof SecretFormatError) throw new SecretFormatError(error.message, { index: error.index, source: { flag: "--secret" } });
    throw error;
  }
}

/**
 * Said once, on stderr, when no secret is configured at all (the only case in
 * which nothing is signed or verified); `config` when a config file could hold one.
 */
export function warnUnsigned(output: Pick<Output, "warn">, what: string, { config }: { config: boolean }): void {
  const sources = config ? `--secret, --secret-file, $${SECRET_ENV} or the config's sharedSecret` : `--secret, --secret-file or $${SECRET_ENV}`;
  output.warn(`no secret given (${sources}): ${what}`);
}
