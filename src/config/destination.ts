import { dirname, resolve } from "node:path";
import { ConfigError, UsageError } from "../errors.js";
import { readSettings } from "../functions/settings.js";
import type { Mapping } from "../messages/mapping.js";
import type { AliasKeys } from "../messages/schemas.js";
import type { SchemeName } from "../signing/schemes.js";
import { configTargetParts, flagTargetParts, refuseFlagsWithoutUrls, resolveDestination, type ActionsInput } from "./actions.js";
import { parseHeaderFlag, validateHeader, validateUrl, validateUserAgent } from "./checks.js";
import { defaultConfigPath, loadConfig, type ConfigFile } from "./file.js";
import { oneSecretInput, resolveSenderSecrets, type SecretInput, type SecretsInput } from "./secret.js";

/** At most five webhook URLs (docs/delivery.md#targets). */
const MAX_TARGETS = 5;
/** At most fifty static headers per URL (docs/delivery.md#static-headers). */
const MAX_HEADERS_PER_TARGET = 50;
export const DEFAULT_USER_AGENT = "Segment.io/1.0";
/** What the Webhooks (Actions) destination sends as its User-Agent (docs/actions.md#the-request). */
export const ACTIONS_USER_AGENT = "Segment (Actions)";

/** Which of the service's webhook destinations is imitated (docs/actions.md). */
export type Destination = "classic" | "actions";
export const DESTINATIONS: readonly Destination[] = ["classic", "actions"];

/** The methods the Webhooks (Actions) destination sends with. */
export type HttpMethod = "POST" | "PUT" | "PATCH";
export const HTTP_METHODS: readonly HttpMethod[] = ["POST", "PUT", "PATCH"];

/**
 * One webhook URL with its static headers. Under Webhooks (Actions) each is its own mapping, with
 * its own method, `data` mapping and batch size (absent: POST, the whole message, no batching).
 */
export interface Target {
  url: string;
  headers: Record<string, string>;
  /** The signature scheme of this URL (the config file's `scheme` per webhook); absent: the engine's. */
  scheme?: SchemeName;
  method?: HttpMethod;
  mapping?: Mapping;
  batchSize?: number;
  /**
   * A destination function instead of a URL (docs/functions.md#as-a-destination); `url` is then `function:FILE`.
   * @internal the command line's: the library's engine takes URLs.
   */
  function?: FunctionTarget;
}

/** A destination function as a target: its file, where it is read from, and its settings. */
export interface FunctionTarget {
  /** The file as given (errors name it so). */
  file: string;
  /** The directory `file` is relative to: the current one for `--function`, the config file's for its webhooks. */
  base: string;
  settings: Record<string, unknown>;
}

export interface Source {
  name: string;
  writeKey: string;
}

/** The destination's settings, resolved from flags, environment and config file. */
export interface DestinationSettings {
  /** Classic (absent: the default) or Webhooks (Actions) (docs/actions.md). */
  destination?: Destination;
  /** Webhooks (Actions): how long `serve` keeps a partial batch open for more events (absent: 1 s). */
  batchWaitMs?: number;
  targets: Target[];
  /** The first of `secrets`, or undefined without any. */
  secret: string | undefined;
  /** Every secret to sign with (key rotation: list-carrying schemes sign with each, the others with the first); empty without any. */
  secrets: string[];
  /** The signature scheme (`--scheme`); a target's own (the config's per webhook) applies when it is absent. */
  scheme?: SchemeName | undefined;
  userAgent: string;
  aliasKeys: AliasKeys;
  /** A switched-off destination forwards nothing (docs/serve-api.md#enabled-switch). */
  enabled: boolean;
  sources: Source[];
}

export interface SettingsInput extends SecretInput, Partial<Omit<SecretsInput, "cwd" | "env">>, ActionsInput {
  scheme?: SchemeName | undefined;
  urls?: readonly string[] | undefined;
  headers?: readonly string[] | undefined;
  userAgent?: string | undefined;
  aliasKeys?: AliasKeys | undefined;
  /** An explicit config file; otherwise `./webhook-cli.json` is read when present. */
  configPath?: string | undefined;
  /** Fail when no URL is configured (send, replay); serve may start without one. */
  requireTargets?: boolean | undefined;
  /** A destination function instead of URLs (docs/functions.md#as-a-destination): its file and `--settings` (a JSON object or a file). */
  function?: { file: string; settings?: string | undefined } | undefined;
}

/**
 * Resolves the destination settings. Precedence: flag > environment > config
 * file; `--url` replaces the config's webhooks and `--header` applies to them.
 */
export function resolveSettings(input: SettingsInput): DestinationSettings {
  const configPath = input.configPath ?? defaultConfigPath(input.cwd);
  const configFile = configPath ? resolve(input.cwd, configPath) : undefined;
  const config: ConfigFile = configFile ? loadConfig(configFile, input.configPath !== undefined) : {};
  const { destination, batchWaitMs } = resolveDestination(input, config, configFile ?? "");

  const targets = input.function
    ? [functionFlagTarget(input, input.function)]
    : input.urls && input.urls.length > 0
      ? flagTargets(input, input.urls)
      : configTargets(input, config, configFile ?? "");
  if (destination === "actions" && targets.some((target) => target.function !== undefined)) {
    throw new UsageError("a destination function is a destination of its own: it takes no `destination` actions", { field: "function" });
  }
  if (input.requireTargets && targets.length === 0) {
    throw new UsageError(`no webhook URL: give \`urls\` or a config file with "webhooks"`, { field: "urls" });
  }

  const userAgent = input.userAgent ?? config.userAgent;
  const secrets = secretsOf(input, config);
  return {
    destination,
    batchWaitMs,
    targets,
    secret: secrets[0],
    secrets,
    ...(input.scheme !== undefined ? { scheme: input.scheme } : {}),
    userAgent:
      userAgent === undefined
        ? destination === "actions"
          ? ACTIONS_USER_AGENT
          : DEFAULT_USER_AGENT
        : validateUserAgent(userAgent, input.userAgent !== undefined ? { field: "userAgent" } : { file: configFile ?? "", key: "userAgent" }),
    aliasKeys: input.aliasKeys ?? config.aliasKeys ?? "spec",
    enabled: config.enabled ?? true,
    sources: config.sources ?? [],
  };
}

/** `secret`/`secretFile` (one) or `secrets`/`secretFiles` (several), else the environment's, else the config's. */
function secretsOf(input: SettingsInput, config: ConfigFile): string[] {
  const several = input.secrets !== undefined || input.secretFiles !== undefined;
  return resolveSenderSecrets(several ? input : oneSecretInput(input), config);
}

/** `--function` (and `--settings`): a destination function in place of the URLs (the config's webhooks too). */
function functionFlagTarget(input: SettingsInput, given: { file: string; settings?: string | undefined }): Target {
  if (input.urls && input.urls.length > 0)
    throw new UsageError("give `urls` or `function`, not both: a function takes the place of the URLs", { field: "function" });
  if (input.headers && input.headers.length > 0) throw new UsageError("`headers` applies to `urls` targets, not to a function", { field: "headers" });
  refuseFlagsWithoutUrls(input);
  const settings = given.settings !== undefined ? readSettings(given.settings, input.cwd, "--settings") : {};
  return functionTarget(given.file, input.cwd, settings);
}

/** A function's target: `function:FILE` as given, where lines and results name it. */
export function functionTarget(file: string, base: string, settings: Record<string, unknown>): Target {
  return { url: `function:${file}`, headers: {}, function: { file, base, settings } };
}

/** `--url` (and `--header`): the targets the flags give, each checked. */
function flagTargets(input: SettingsInput, urls: readonly string[]): Target[] {
  const headers: Record<string, string> = {};
  for (const text of input.headers ?? []) {
    const [name, value] = parseHeaderFlag(text);
    headers[name] = value;
  }
  if (Object.keys(headers).length > MAX_HEADERS_PER_TARGET) {
    throw new UsageError(`${Object.keys(headers).length} headers given; at most ${MAX_HEADERS_PER_TARGET} per URL`, { field: "headers" });
  }
  const parts = flagTargetParts(input);
  const targets = urls.map((url) => ({ url: validateUrl(url, { field: "urls" }), headers: { ...headers }, ...parts }));
  if (targets.length > MAX_TARGETS) {
    throw new UsageError(`${targets.length} URLs given; the destination takes at most ${MAX_TARGETS}`, { field: "urls" });
  }
  return targets;
}

/** The config file's `webhooks`, each checked (no target flag may be given without `--url`). */
function configTargets(input: SettingsInput, config: ConfigFile, configFile: string): Target[] {
  if (input.headers && input.headers.length > 0) {
    throw new UsageError("`headers` applies to `urls` targets; give `urls` too, or put headers in the config file", { field: "headers" });
  }
  refuseFlagsWithoutUrls(input);
  const webhooks = config.webhooks ?? [];
  if (webhooks.length > MAX_TARGETS) {
    throw new ConfigError(`${webhooks.length} webhooks configured; at most ${MAX_TARGETS}`, { file: configFile, key: "webhooks" });
  }
  return webhooks.map((hook, index) => {
    const source = { file: configFile, key: `webhooks[${index}]` };
    if (hook.function !== undefined) return configFunctionTarget(hook, index, configFile);
    if (hook.url === undefined) throw new ConfigError('a webhook has a "url", or a "function"', source);
    if (hook.settings !== undefined) throw new ConfigError('"settings" goes with a "function"', { ...source, key: `webhooks[${index}].settings` });
    validateUrl(hook.url, { ...source, key: `webhooks[${index}].url` });
    const headers = hook.headers ?? {};
    if (Object.keys(headers).length > MAX_HEADERS_PER_TARGET) {
      throw new ConfigError(`at most ${MAX_HEADERS_PER_TARGET} headers per URL`, { ...source, key: `webhooks[${index}].headers` });
    }
    for (const [name, value] of Object.entries(headers)) validateHeader(name, value, { ...source, key: `webhooks[${index}].headers.${name}` });
    // --scheme names every URL's scheme; without it, each webhook's own.
    const scheme = input.scheme === undefined && hook.scheme !== undefined ? { scheme: hook.scheme } : {};
    return { url: hook.url, headers: { ...headers }, ...scheme, ...configTargetParts(hook, index, configFile) };
  });
}

/** A config webhook that is a destination function: its file and settings (a file too) from the config file's directory. */
function configFunctionTarget(hook: NonNullable<ConfigFile["webhooks"]>[number], index: number, configFile: string): Target {
  const key = `webhooks[${index}]`;
  const other = (["url", "headers", "method", "data", "scheme"] as const).find((name) => hook[name] !== undefined);
  if (other !== undefined) throw new ConfigError(`"${other}" does not go with a "function"`, { file: configFile, key: `${key}.${other}` });
  const file = hook.function as string;
  const dir = dirname(configFile);
  const settings =
    typeof hook.settings === "string" ? readSettings(hook.settings, dir, `${key}.settings`) : ((hook.settings as Record<string, unknown> | undefined) ?? {});
  const target = functionTarget(file, dir, settings);
  if (hook.batchSize !== undefined) target.batchSize = hook.batchSize;
  return target;
}
