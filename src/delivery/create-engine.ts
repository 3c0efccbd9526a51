import { ConfigError, WebhookCliError } from "../errors.js";
import type { Destination, HttpMethod, Target } from "../config/destination.js";
import type { Clock, Random } from "../util/clock.js";
import { isPlainObject } from "../json/parse.js";
import { MAX_TIMER_MS } from "../util/numbers.js";
import type { DeliveryEngine } from "./deliver.js";
import type { DeliveryTransport } from "./transport.js";

/**
 * The delivery engine for library users (docs/library.md#the-delivery-engine): the options are
 * checked as the CLI checks its flags, then THE engine (deliver.ts) is built over the given
 * transport or over undici. Async because the engine is loaded here and only here, so
 * `import { Analytics } from "webhook-cli"` loads none of it.
 */

export interface DeliveryEngineOptions {
  /**
   * Where every message goes: URLs, or URLs with their static headers (docs/delivery.md#static-headers);
   * under Webhooks (Actions) also each one's `method` and `data` mapping (docs/actions.md#data-mappings).
   */
  targets: readonly (string | { url: string; headers?: Record<string, string>; method?: HttpMethod; data?: string | Record<string, unknown> })[];
  /** `classic` (the default) or `actions`: Webhooks (Actions) rules (docs/actions.md). */
  destination?: Destination;
  /** The shared secret: each body is signed into X-Signature. Without one (or undefined), nothing is signed. */
  secret?: string | undefined;
  /** Default `Segment.io/1.0`, as the real destination sends. */
  userAgent?: string;
  /** Deadline of one attempt, connect and TLS included, in ms. Default 5000. */
  timeoutMs?: number;
  /** No attempt starts later than this after the first one, in ms; 0 = no retries. Default 4 h. */
  retryWindowMs?: number;
  /** Time for retry waits (tests pass a VirtualClock). Default: the system clock. */
  clock?: Clock;
  /** Randomness for the backoff's jitter. Default Math.random. */
  random?: Random;
  /** The network. Default: undici, keep-alive, certificates verified. */
  transport?: DeliveryTransport;
  /** With the default transport: extra trusted CA certificates (PEM), added to Node's roots. */
  ca?: readonly string[];
  /** With the default transport: keep-alive connections per origin. Default 16. */
  connections?: number;
}

const KNOWN_OPTIONS: ReadonlySet<string> = new Set<keyof DeliveryEngineOptions>([
  "targets",
  "destination",
  "secret",
  "userAgent",
  "timeoutMs",
  "retryWindowMs",
  "clock",
  "random",
  "transport",
  "ca",
  "connections",
]);

/** Builds the delivery engine; a bad option is a ConfigError naming it, before anything is sent. */
export async function createDeliveryEngine(options: DeliveryEngineOptions): Promise<DeliveryEngine> {
  if (!isPlainObject(options)) throw new ConfigError("the delivery engine's options must be an object", { key: "options" });
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw new ConfigError(`Unknown option '${key}'; known options: ${[...KNOWN_OPTIONS].join(", ")}.`, { key });
  }
  const { secret, timeoutMs, retryWindowMs, clock, random, transport, ca, connections } = options;
  if (secret !== undefined && (typeof secret !== "string" || secret === "")) {
    throw new ConfigError("secret must be a non-empty string (leave it out to send unsigned)", { key: "secret" });
  }
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS)) {
    throw new ConfigError(`timeoutMs must be a number > 0 and at most ${MAX_TIMER_MS}, got ${String(timeoutMs)}`, { key: "timeoutMs" });
  }
  if (retryWindowMs !== undefined && !(Number.isFinite(retryWindowMs) && retryWindowMs >= 0)) {
    throw new ConfigError(`retryWindowMs must be a number ≥ 0, got ${String(retryWindowMs)}`, { key: "retryWindowMs" });
  }
  if (transport !== undefined && (ca !== undefined || connections !== undefined)) {
    throw new ConfigError("ca and connections set up the default transport: give them or a transport, not both", { key: "transport" });
  }
  if (connections !== undefined && !(Number.isInteger(connections) && connections >= 1)) {
    throw new ConfigError(`connections must be a whole number ≥ 1, got ${String(connections)}`, { key: "connections" });
  }
  ca?.forEach((pem, i) => {
    if (typeof pem !== "string" || !pem.includes("-----BEGIN CERTIFICATE-----")) {
      throw new ConfigError(`ca[${i}] is not a PEM certificate (no BEGIN CERTIFICATE block)`, { key: `ca[${i}]` });
    }
  });

  const destination = options.destination ?? "classic";
  if (destination !== "classic" && destination !== "actions") {
    throw new ConfigError(`destination must be "classic" or "actions", got ${JSON.stringify(destination)}`, { key: "destination" });
  }
  const settings = {
    targets: await checkTargets(options.targets, destination),
    secret,
    userAgent: await checkUserAgent(options.userAgent, destination),
    destination,
  };
  const engine = { timeoutMs, retryWindowMs, clock, random };
  if (transport !== undefined) {
    const { DeliveryEngine } = await import("./deliver.js");
    return new DeliveryEngine(settings, { ...engine, transport });
  }
  const { undiciEngine } = await import("./undici-engine.js");
  return undiciEngine(settings, { ...engine, ca, connections });
}

/** The destination's own URL and header rules (docs/delivery.md#targets), applied to each target; Webhooks (Actions) mappings. */
async function checkTargets(targets: DeliveryEngineOptions["targets"], destination: Destination): Promise<Target[]> {
  if (!Array.isArray(targets)) throw new ConfigError("targets must be an array of URLs or { url, headers }", { key: "targets" });
  const [{ validateHeader, validateUrl }, { mappingFromValue }] = await Promise.all([import("../config/checks.js"), import("../messages/mapping.js")]);
  return targets.map((target: unknown, i) => {
    const key = `targets[${i}]`;
    const {
      url,
      headers = {},
      method,
      data,
    } = typeof target === "string"
      ? { url: target }
      : isPlainObject(target)
        ? (target as { url: unknown; headers?: unknown; method?: unknown; data?: unknown })
        : { url: undefined };
    if (typeof url !== "string") throw new ConfigError(`${key} must be a URL or { url, headers }`, { key });
    if (!isPlainObject(headers)) throw new ConfigError(`${key}.headers must be an object of header names to values`, { key: `${key}.headers` });
    asConfigError(key, () => validateUrl(url, { key }));
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== "string") throw new ConfigError(`${key}: header "${name}" must have a string value`, { key: `${key}.headers` });
      asConfigError(`${key}.headers`, () => validateHeader(name, value, { key: `${key}.headers` }));
    }
    const checked: Target = { url, headers: { ...(headers as Record<string, string>) } };
    if ((method !== undefined || data !== undefined) && destination !== "actions") {
      throw new ConfigError(`${key}: method and data apply to destination "actions"`, { key });
    }
    if (method !== undefined) {
      if (method !== "POST" && method !== "PUT" && method !== "PATCH")
        throw new ConfigError(`${key}.method must be POST, PUT or PATCH`, { key: `${key}.method` });
      checked.method = method;
    }
    if (data !== undefined) checked.mapping = mappingFromValue(data, { key: `${key}.data` });
    return checked;
  });
}

async function checkUserAgent(userAgent: string | undefined, destination: Destination): Promise<string> {
  const [{ DEFAULT_USER_AGENT, ACTIONS_USER_AGENT }, { validateHeader }] = await Promise.all([
    import("../config/destination.js"),
    import("../config/checks.js"),
  ]);
  if (userAgent === undefined) return destination === "actions" ? ACTIONS_USER_AGENT : DEFAULT_USER_AGENT;
  if (typeof userAgent !== "string" || userAgent === "") throw new ConfigError("userAgent must be a non-empty string", { key: "userAgent" });
  asConfigError("userAgent", () => validateHeader("User-Agent", userAgent, { key: "userAgent" }));
  return userAgent;
}

/** The CLI's checks word a bad value as a usage error; here it is a bad option, named in the message. */
function asConfigError(key: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof WebhookCliError) throw new ConfigError(`${key}: ${error.message}`, { key });
    throw error;
  }
}
