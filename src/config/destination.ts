import { resolve } from "node:path";
import { ConfigError, UsageError } from "../errors.js";
import type { Mapping } from "../messages/mapping.js";
import type { AliasKeys } from "../messages/schemas.js";
import { configTargetParts, flagTargetParts, refuseFlagsWithoutUrls, resolveDestination, type ActionsInput } from "./actions.js";
import { parseHeaderFlag, validateHeader, validateUrl, validateUserAgent } from "./checks.js";
import { defaultConfigPath, loadConfig, type ConfigFile } from "./file.js";
import { resolveSecret, type SecretInput } from "./secret.js";

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
  method?: HttpMethod;
  mapping?: Mapping;
  batchSize?: number;
  /** A destination function instead of a URL (docs/functions.md#as-a-destination); `url` is then `function:FILE`. */
  function?: FunctionTarget;
}

/** A destination function as a target: its file (as resolved) and its settings. */
export interface FunctionTarget {
  /** The file's absolute path. */
  path: string;
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
  secret: string | undefined;
  userAgent: string;
  aliasKeys: AliasKeys;
  /** A switched-off destination forwards nothing (docs/serve-api.md#enabled-switch). */
  enabled: boolean;
  sources: Source[];
}

export interface SettingsInput extends SecretInput, ActionsInput {
  urls?: readonly string[] | undefined;
  headers?: readonly string[] | undefined;
  userAgent?: string | undefined;
  aliasKeys?: AliasKeys | undefined;
  /** An explicit config file; otherwise `./webhook-cli.json` is read when present. */
  configPath?: string | undefined;
  /** Fail when no URL is configured (send, replay); serve may start without one. */
  requireTargets?: boolean | undefined;
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

  const targets = input.urls && input.urls.length > 0 ? flagTargets(input, input.urls) : configTargets(input, config, configFile ?? "");
  if (input.requireTargets && targets.length === 0) {
    throw new UsageError(`no webhook URL: give \`urls\` or a config file with "webhooks"`, { field: "urls" });
  }

  const userAgent = input.userAgent ?? config.userAgent;
  return {
    destination,
    batchWaitMs,
    targets,
    secret: resolveSecret(input, config),
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
    validateUrl(hook.url, { ...source, key: `webhooks[${index}].url` });
    const headers = hook.headers ?? {};
    if (Object.keys(headers).length > MAX_HEADERS_PER_TARGET) {
      throw new ConfigError(`at most ${MAX_HEADERS_PER_TARGET} headers per URL`, { ...source, key: `webhooks[${index}].headers` });
    }
    for (const [name, value] of Object.entries(headers)) validateHeader(name, value, { ...source, key: `webhooks[${index}].headers.${name}` });
    return { url: hook.url, headers: { ...headers }, ...configTargetParts(hook, index, configFile) };
  });
}
