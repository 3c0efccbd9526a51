import { resolve } from "node:path";
import { UsageError, type ErrorSource } from "../errors.js";
import { MAX_SETTINGS_FILE_BYTES, readRegularFile } from "../util/readable-file.js";
import { SECRET_ENV } from "./secret-env.js";

export { SECRET_ENV };

/** Where a shared secret may come from, highest precedence first (docs/cli.md#secrets-and-credentials). */
export interface SecretInput {
  secret?: string | undefined;
  /** A file holding the secret; one trailing newline is stripped. */
  secretFile?: string | undefined;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The one secret resolver: `secret` > `secretFile` > WEBHOOK_SECRET > the
 * config's `sharedSecret`. An empty secret from any of them is an error naming
 * where it came from (signing with an empty key would pass for a secret);
 * undefined means no secret is configured at all.
 */
export function resolveSecret(input: SecretInput, config?: { sharedSecret?: string | undefined }): string | undefined {
  return resolveSenderSecrets(oneSecretInput(input), config)[0];
}

/** One secret's flags as the several secrets' resolver takes them: the one source that wins (the flag is read, not the file). */
export function oneSecretInput(input: SecretInput): SecretsInput {
  const given = input.secret !== undefined ? { secrets: [input.secret] } : input.secretFile !== undefined ? { secretFiles: [input.secretFile] } : {};
  return { ...given, cwd: input.cwd, env: input.env };
}

function refuseEmpty(secret: string, source: ErrorSource, problem = "the secret is empty"): string {
  if (secret === "") throw new UsageError(problem, source);
  return secret;
}

/** Reads a secret file, stripping one trailing newline; `name` is the file as given, for errors. */
function readSecretFile(path: string, name = path): string {
  return readRegularFile(path, { field: "secretFile", file: name }, MAX_SETTINGS_FILE_BYTES)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

/**
 * A sender's secrets (docs/cli.md#secrets-and-credentials): the flags' and files' (resolveSecrets),
 * else WEBHOOK_SECRET, else the config's `sharedSecret`; none at all is an empty list.
 */
export function resolveSenderSecrets(input: SecretsInput, config?: { sharedSecret?: string | undefined }): string[] {
  const secrets = resolveSecrets(input);
  // loadConfig refuses an empty sharedSecret, naming the file and key.
  return secrets.length === 0 && config?.sharedSecret !== undefined ? [config.sharedSecret] : secrets;
}

/** Several secrets (key rotation): every `--secret`, then every `--secret-file`. */
export interface SecretsInput {
  secrets?: readonly string[] | undefined;
  secretFiles?: readonly string[] | undefined;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The secrets a scheme signs or verifies with (docs/schemes.md#key-rotation): each `secrets` value,
 * then each file's (one trailing newline stripped), in the order given; WEBHOOK_SECRET when neither
 * is given. An empty one is an error naming where it came from; none at all is an empty list.
 */
export function resolveSecrets(input: SecretsInput): string[] {
  const given = (input.secrets ?? []).map((secret) => refuseEmpty(secret, { field: "secret" }));
  const read = (input.secretFiles ?? []).map((file) =>
    refuseEmpty(readSecretFile(resolve(input.cwd, file), file), { field: "secretFile", file }, "the secret file is empty"),
  );
  if (given.length + read.length > 0) return [...given, ...read];
  const env = input.env[SECRET_ENV];
  return env === undefined ? [] : [refuseEmpty(env, { env: SECRET_ENV })];
}
