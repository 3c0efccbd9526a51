import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { ConfigError, UsageError, type ErrorSource } from "../errors.js";
import type { AliasKeys } from "../messages/schemas.js";
import { parseJson } from "../util/json-depth.js";
import { redactUrl } from "../util/redact.js";

/** At most five webhook URLs (docs/delivery.md#targets). */
const MAX_TARGETS = 5;
/** At most fifty static headers per URL (docs/delivery.md#static-headers). */
const MAX_HEADERS_PER_TARGET = 50;
export const DEFAULT_USER_AGENT = "Segment.io/1.0";
const DEFAULT_CONFIG_FILE = "webhook-cli.json";

/** One webhook URL with its static headers. */
export interface Target {
  url: string;
  headers: Record<string, string>;
}

export interface Source {
  name: string;
  writeKey: string;
}

/** The destination's settings, resolved from flags, environment and config file. */
export interface DestinationSettings {
  targets: Target[];
  secret: string | undefined;
  userAgent: string;
  aliasKeys: AliasKeys;
  /** A switched-off destination forwards nothing (docs/serve-api.md#enabled-switch). */
  enabled: boolean;
  sources: Source[];
}

// Headers that would break framing, signing or the message itself.
const REFUSED_HEADERS = new Set([
  "content-type",
  "x-signature",
  "content-length",
  "host",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Latin-1 without CR, LF and NUL.
// What HTTP allows in a field value: tab, visible ASCII and space, obs-text (Latin-1); no control characters.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const configSchema = z.strictObject({
  sharedSecret: z.string().min(1, { error: "the secret is empty" }).optional(),
  webhooks: z
    .array(z.strictObject({ url: z.string(), headers: z.record(z.string(), z.string()).optional() }))
    .optional(),
  userAgent: z.string().min(1).optional(),
  aliasKeys: z.enum(["spec", "camel"]).optional(),
  enabled: z.boolean().optional(),
  sources: z.array(z.strictObject({ name: z.string().min(1), writeKey: z.string().min(1) })).optional(),
});
export type ConfigFile = z.infer<typeof configSchema>;

/** Reads and validates a config file; errors name the file and the key. */
function loadConfig(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read config file: ${(error as Error).message}`, { file: path });
  }
  let json: unknown;
  try {
    json = parseJson(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new ConfigError(`not valid JSON: ${(error as Error).message}`, { file: path });
  }
  const result = configSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = issue ? issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "") : "";
    throw new ConfigError(issue?.message ?? "invalid config", { file: path, ...(key ? { key } : {}) });
  }
  return result.data;
}

/** Checks one static header, naming it and where it came from when refused. */
export function validateHeader(name: string, value: string, source: ErrorSource): void {
  if (!TOKEN.test(name)) throw new UsageError(`header name "${name}" is not a valid HTTP token`, source);
  if (REFUSED_HEADERS.has(name.toLowerCase())) {
    throw new UsageError(`header "${name}" cannot be set: webhook-cli sets it itself`, source);
  }
  if (!HEADER_VALUE.test(value)) {
    throw new UsageError(`header "${name}" has a value with control characters (CR/LF, NUL…) or characters outside Latin-1`, source);
  }
}

/** Parses `Name: value` (from `--header`). */
export function parseHeaderFlag(text: string): [string, string] {
  const colon = text.indexOf(":");
  if (colon <= 0) throw new UsageError(`"${text}" is not of the form 'Name: value'`, { field: "headers" });
  const name = text.slice(0, colon).trim();
  const value = text.slice(colon + 1).trim();
  validateHeader(name, value, { field: "headers" });
  return [name, value];
}

/** Parses an absolute http: or https: URL; the errors show it with any password masked. */
export function parseHttpUrl(url: string, source: ErrorSource): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`"${redactUrl(url)}" is not a valid URL (include http:// or https://)`, source);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`"${redactUrl(url)}" is not an http: or https: URL`, source);
  }
  return parsed;
}

/** Checks a webhook URL: absolute, http or https, and no credentials in it. */
export function validateUrl(url: string, source: ErrorSource): string {
  const parsed = parseHttpUrl(url, source);
  // Credentials in the URL would be printed wherever the URL is (reports, dead letters): refused, see README "Security".
  if (parsed.username !== "" || parsed.password !== "") {
    throw new UsageError(
      `"${redactUrl(url)}" has credentials in it (user:password@): pass them as a header instead, e.g. --header 'Authorization: Basic …'`,
      source,
    );
  }
  return url;
}

export interface SettingsInput extends SecretInput {
  urls?: readonly string[] | undefined;
  headers?: readonly string[] | undefined;
  userAgent?: string | undefined;
  aliasKeys?: AliasKeys | undefined;
  /** An explicit config file; otherwise `./webhook-cli.json` is read when present. */
  configPath?: string | undefined;
  /** Fail when no URL is configured (send, replay); serve may start without one. */
  requireTargets?: boolean | undefined;
}

/** The environment variable that holds the shared secret. */
export const SECRET_ENV = "WEBHOOK_SECRET";

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
  if (input.secret !== undefined) return refuseEmpty(input.secret, { field: "secret" });
  if (input.secretFile !== undefined) {
    const secret = readSecretFile(resolve(input.cwd, input.secretFile), input.secretFile);
    return refuseEmpty(secret, { field: "secretFile", file: input.secretFile }, "the secret file is empty");
  }
  const env = input.env[SECRET_ENV];
  if (env !== undefined) return refuseEmpty(env, { env: SECRET_ENV });
  // loadConfig refuses an empty sharedSecret, naming the file and key.
  return config?.sharedSecret;
}

function refuseEmpty(secret: string, source: ErrorSource, problem = "the secret is empty"): string {
  if (secret === "") throw new UsageError(problem, source);
  return secret;
}

/** Reads a secret file, stripping one trailing newline; `name` is the file as given, for errors. */
function readSecretFile(path: string, name = path): string {
  try {
    return readFileSync(path, "utf8").replace(/\r?\n$/, "");
  } catch (error) {
    throw new UsageError(`cannot read secret file: ${(error as Error).message}`, { field: "secretFile", file: name });
  }
}

/** Reads `--ca` files (PEM), naming the file when one is unreadable or not a certificate. */
export function readCaFiles(files: readonly string[], cwd: string): string[] {
  return files.map((file) => {
    let text: string;
    try {
      text = readFileSync(resolve(cwd, file), "utf8");
    } catch (error) {
      throw new UsageError(`cannot read CA file: ${(error as Error).message}`, { field: "ca", file });
    }
    if (!text.includes("-----BEGIN CERTIFICATE-----")) throw new UsageError("not a PEM certificate (no BEGIN CERTIFICATE block)", { field: "ca", file });
    return text;
  });
}

/**
 * Resolves the destination settings. Precedence: flag > environment > config
 * file; `--url` replaces the config's webhooks and `--header` applies to them.
 */
export function resolveSettings(input: SettingsInput): DestinationSettings {
  const configPath = input.configPath ?? defaultConfigPath(input.cwd);
  const configFile = configPath ? resolve(input.cwd, configPath) : undefined;
  const config: ConfigFile = configFile ? loadConfig(configFile) : {};

  let targets: Target[];
  if (input.urls && input.urls.length > 0) {
    const headers: Record<string, string> = {};
    for (const text of input.headers ?? []) {
      const [name, value] = parseHeaderFlag(text);
      headers[name] = value;
    }
    if (Object.keys(headers).length > MAX_HEADERS_PER_TARGET) {
      throw new UsageError(`${Object.keys(headers).length} headers given; at most ${MAX_HEADERS_PER_TARGET} per URL`, { field: "headers" });
    }
    targets = input.urls.map((url) => ({ url: validateUrl(url, { field: "urls" }), headers: { ...headers } }));
    if (targets.length > MAX_TARGETS) {
      throw new UsageError(`${targets.length} URLs given; the destination takes at most ${MAX_TARGETS}`, { field: "urls" });
    }
  } else {
    if (input.headers && input.headers.length > 0) {
      throw new UsageError("`headers` applies to `urls` targets; give `urls` too, or put headers in the config file", { field: "headers" });
    }
    const webhooks = config.webhooks ?? [];
    if (webhooks.length > MAX_TARGETS) {
      throw new ConfigError(`${webhooks.length} webhooks configured; at most ${MAX_TARGETS}`, { file: configFile ?? "", key: "webhooks" });
    }
    targets = webhooks.map((hook, index) => {
      const source = { file: configFile ?? "", key: `webhooks[${index}]` };
      validateUrl(hook.url, { ...source, key: `webhooks[${index}].url` });
      const headers = hook.headers ?? {};
      if (Object.keys(headers).length > MAX_HEADERS_PER_TARGET) {
        throw new ConfigError(`at most ${MAX_HEADERS_PER_TARGET} headers per URL`, { ...source, key: `webhooks[${index}].headers` });
      }
      for (const [name, value] of Object.entries(headers)) validateHeader(name, value, { ...source, key: `webhooks[${index}].headers.${name}` });
      return { url: hook.url, headers: { ...headers } };
    });
  }
  if (input.requireTargets && targets.length === 0) {
    throw new UsageError(`no webhook URL: give \`urls\` or a config file with "webhooks"`, { field: "urls" });
  }

  return {
    targets,
    secret: resolveSecret(input, config),
    userAgent: validateUserAgent(input.userAgent ?? config.userAgent, input.userAgent !== undefined ? { field: "userAgent" } : { file: configFile ?? "", key: "userAgent" }),
    aliasKeys: input.aliasKeys ?? config.aliasKeys ?? "spec",
    enabled: config.enabled ?? true,
    sources: config.sources ?? [],
  };
}

function validateUserAgent(value: string | undefined, source: ErrorSource): string {
  if (value === undefined) return DEFAULT_USER_AGENT;
  if (!HEADER_VALUE.test(value)) throw new UsageError("the User-Agent has control characters (CR/LF, NUL…) or characters outside Latin-1", source);
  return value;
}

function defaultConfigPath(cwd: string): string | undefined {
  return existsSync(resolve(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined;
}
