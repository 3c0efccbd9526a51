import { RETRY_RULES } from "../delivery/retry-rules.js";
import { ConfigError } from "../errors.js";
import { systemClock, type Clock, type Random } from "../util/clock.js";
import { isPlainObject } from "../json/parse.js";
import { MAX_TIMER_MS } from "../util/numbers.js";
import type { AnalyticsOptions } from "./types.js";
import { describeType } from "./validate.js";

/**
 * The client's options (docs/serve-api.md#client-options): each default written once, as a
 * parameter default, and every given value checked, naming the option.
 */

/** The options with their defaults applied and checked. */
export interface ClientSettings {
  endpoint: string;
  flushAt: number;
  flushAfter: number;
  timeout: number;
  maxRetries: number;
  maxQueueSize: number;
  maxQueueBytes: number;
  concurrency: number;
  clock: Clock;
  random: Random;
  debug: boolean;
  /** Never throws: logging must never be the thing that breaks a call or a delivery. */
  log: (line: string) => void;
}

/**
 * `DEBUG=analytics` (also in a comma/space separated list, or `analytics*`, or `*`) turns logging
 * on. Read once, when the package loads (docs/serve-api.md#client-logging).
 */
const DEBUG_FROM_ENV = debugFromEnv(process.env.DEBUG);

export function debugFromEnv(value: string | undefined): boolean {
  if (!value) return false;
  return value.split(/[\s,]+/).some((name) => name === "analytics" || name === "*" || name.startsWith("analytics:") || name === "analytics*");
}

function stderrLog(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function resolveOptions(writeKey: unknown, options: AnalyticsOptions | undefined): ClientSettings {
  if (typeof writeKey !== "string" || writeKey === "") {
    throw new ConfigError("You must pass your source's write key.", { key: "writeKey" });
  }
  // null reads as "no options", as it always has.
  const given = options ?? {};
  checkOptions(given);
  const {
    endpoint = "https://api.segment.io",
    flushAt = 20,
    flushAfter = 5_000,
    // The retry rules' client row holds these two: its timeout and how many retries.
    timeout = RETRY_RULES.client.timeoutMs,
    maxRetries = RETRY_RULES.client.limit.maxRetries,
    maxQueueSize = 10_000,
    maxQueueBytes = 32 * 1024 * 1024,
    // Batch requests in flight at once: each carries up to 500 KB of calls, so a few keep a collection API busy.
    concurrency = 4,
    clock = systemClock,
    random = Math.random,
    debug = DEBUG_FROM_ENV,
    log = stderrLog,
  } = given;
  return {
    endpoint,
    flushAt: positiveInteger("flushAt", flushAt),
    flushAfter: timerMs("flushAfter", flushAfter),
    timeout: timerMs("timeout", timeout),
    maxRetries: nonNegativeInteger("maxRetries", maxRetries),
    maxQueueSize: positiveInteger("maxQueueSize", maxQueueSize),
    maxQueueBytes: positiveInteger("maxQueueBytes", maxQueueBytes),
    concurrency: positiveInteger("concurrency", concurrency),
    clock: expectClock(clock),
    random: expectFunction("random", random),
    debug,
    log: (line) => {
      try {
        log(line);
      } catch {
        // nowhere left to report it
      }
    },
  };
}

function expectClock(clock: Clock): Clock {
  if (typeof clock?.now !== "function" || typeof clock.setTimeout !== "function" || typeof clock.clearTimeout !== "function") {
    throw new ConfigError(`clock must have now(), setTimeout() and clearTimeout(), got ${describeType(clock)}`, { key: "clock" });
  }
  return clock;
}

function expectFunction<F>(key: string, value: F): F {
  if (typeof value !== "function") throw new ConfigError(`${key} must be a function, got ${describeType(value)}`, { key });
  return value;
}

function nonNegativeInteger(key: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${key} must be a whole number ≥ 0, got ${String(value)}`, { key });
  return value;
}

function positiveInteger(key: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${key} must be a whole number ≥ 1, got ${String(value)}`, { key });
  return value;
}

function timerMs(key: string, value: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new ConfigError(`${key} must be a number > 0 and at most ${MAX_TIMER_MS} (milliseconds), got ${String(value)}`, { key });
  }
  return value;
}

const KNOWN_OPTIONS: ReadonlySet<string> = new Set<keyof AnalyticsOptions>([
  "endpoint",
  "flushAt",
  "flushAfter",
  "timeout",
  "maxRetries",
  "maxQueueSize",
  "maxQueueBytes",
  "concurrency",
  "clock",
  "random",
  "debug",
  "log",
]);

/** What users of other clients (analytics-node, -python, -go) would guess, and our name for it. */
const OTHER_NAMES: Readonly<Record<string, keyof AnalyticsOptions>> = {
  host: "endpoint",
  path: "endpoint",
  flushInterval: "flushAfter",
  interval: "flushAfter",
  maxEventsInBatch: "flushAt",
  batchSize: "flushAt",
  httpRequestTimeout: "timeout",
  verbose: "debug",
  logger: "log",
};

/** An unknown option is an error naming it (a silently ignored `host` would send to the public endpoint). */
export function checkOptions(options: unknown): void {
  if (options === undefined) return;
  if (!isPlainObject(options)) throw new ConfigError(`options must be an object, got ${describeType(options)}`);
  for (const key of Object.keys(options)) {
    if (KNOWN_OPTIONS.has(key)) continue;
    const instead = Object.hasOwn(OTHER_NAMES, key) ? OTHER_NAMES[key] : undefined;
    const hint = instead !== undefined ? `: this client calls it '${instead}'` : `; known options: ${[...KNOWN_OPTIONS].join(", ")}`;
    throw new ConfigError(`Unknown option '${key}'${hint}.`, { key });
  }
}
