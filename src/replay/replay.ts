import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { DeliveryEngine, type EngineSettings } from "../delivery/deliver.js";
import type { DeliveryResult } from "../delivery/types.js";
import { InputError } from "../errors.js";
import type { MessageType } from "../messages/schemas.js";
import { systemClock, type Clock } from "../util/clock.js";
import { DeadLetterFile } from "./deadletter.js";
import { checkLine, deadLetterLine, parseEntry, type Failure, type ReplayEntry } from "./envelope.js";
import { readLineBatches } from "./ndjson.js";
import { pace } from "./pacing.js";
import { LatencyHistogram } from "./stats.js";

export const DEFAULT_CONCURRENCY = 64;

export interface ReplayOptions {
  /** The file to read (stdin is spooled to a file by the caller). */
  path: string;
  /** How errors name the input: the path, or `stdin`. */
  name: string;
  settings: EngineSettings;
  timeoutMs?: number;
  retryWindowMs?: number;
  ca?: readonly string[];
  concurrency?: number;
  rate?: number;
  speed?: number;
  /** Only these types are sent (others are counted as filtered). */
  types?: readonly MessageType[];
  /** First line to consider (inclusive), to resume. */
  fromLine?: number;
  skipInvalid?: boolean;
  deadLetter?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
  clock?: Clock;
  /** Send lines that are not known messages as read (replay --raw): they become warnings, not bad lines. */
  raw?: boolean;
  /** A bad line, reported as found. */
  onInvalid?: (line: number, reason: string) => void;
  /** Under `raw`: a line that is not a known message, sent anyway. */
  onWarning?: (line: number, reason: string) => void;
  /** A message that was not delivered (finally failed or interrupted). */
  onFailure?: (entry: ReplayEntry, result: DeliveryResult | undefined, failure: Failure) => void;
  /** Every finished message, for per-message reports (JUnit). */
  onMessage?: (entry: ReplayEntry, result: DeliveryResult | undefined, ms: number) => void;
  /** Called at most every `progressMs` while sending. */
  onProgress?: (progress: ReplayProgress) => void;
  progressMs?: number;
}

export interface ReplayProgress {
  sent: number;
  delivered: number;
  failed: number;
  elapsedMs: number;
}

export interface ReplaySummary {
  /** Lines read, blank ones included. */
  lines: number;
  /** Valid messages from --from-line on that pass the --type filter. */
  messages: number;
  invalid: number;
  filtered: number;
  /** Handed to the delivery engine. */
  sent: number;
  delivered: number;
  /** Finally failed (dead-lettered when --dead-letter is given). */
  failed: number;
  /** Not delivered because of the interruption (dead-lettered with reason "interrupted"). */
  interrupted: number;
  /** Delivered or failed after more than one round. */
  retried: number;
  deadLettered: number;
  p50Ms: number;
  p99Ms: number;
  elapsedMs: number;
  eventsPerSecond: number;
  dryRun: boolean;
  /** Set when interrupted: the --from-line that continues exactly where this run stopped. */
  resumeLine: number | undefined;
}

/**
 * Replays an NDJSON file: a validation pass (nothing is sent when a line is bad
 * unless `skipInvalid`), then a sending pass through the one DeliveryEngine,
 * paced by `pace`. Both passes stream, so memory stays constant.
 */
export async function replay(options: ReplayOptions): Promise<ReplaySummary> {
  const clock = options.clock ?? systemClock;
  const fromLine = options.fromLine ?? 1;
  const types = options.types && options.types.length > 0 ? new Set<string>(options.types) : undefined;
  const signal = options.signal;

  // Pass 1: validate every line from --from-line on.
  const bad = new Set<number>();
  let lines = 0;
  let messages = 0;
  let filtered = 0;
  for await (const batch of readLineBatches(options.path, signal ? { signal } : {})) {
    for (const line of batch) {
      lines = line.number;
      if (line.number < fromLine) continue;
      const reason = "error" in line ? line.error : validate(line.text, line.number);
      if (reason !== undefined) {
        bad.add(line.number);
        options.onInvalid?.(line.number, reason);
      }
    }
  }
  function validate(text: string, number: number): string | undefined {
    const result = checkLine(text, number, options.raw === true);
    if (!result.ok) return result.reason;
    if (result.warning !== undefined) options.onWarning?.(number, result.warning);
    if (types && (result.type === undefined || !types.has(result.type))) filtered += 1;
    else messages += 1;
    return undefined;
  }
  if (bad.size > 0 && !options.skipInvalid && !signal?.aborted) {
    throw new InputError(`${bad.size} bad line${bad.size === 1 ? "" : "s"}; nothing sent (--skip-invalid sends the rest)`, { file: options.name });
  }

  const summary: ReplaySummary = {
    lines,
    messages,
    invalid: bad.size,
    filtered,
    sent: 0,
    delivered: 0,
    failed: 0,
    interrupted: 0,
    retried: 0,
    deadLettered: 0,
    p50Ms: 0,
    p99Ms: 0,
    elapsedMs: 0,
    eventsPerSecond: 0,
    dryRun: options.dryRun === true,
    resumeLine: undefined,
  };
  // Interrupted while validating: nothing was sent, resume where this run started.
  if (signal?.aborted) return { ...summary, resumeLine: fromLine };
  if (options.dryRun) return summary;

  // Pass 2: send. Every message in flight listens on the stop signal (retry waits), so the
  // send pass gets its own signal with room for that many listeners, linked to the caller's.
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const forward = (): void => stop.abort(signal?.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener("abort", forward, { once: true });
  const sendSignal = stop.signal;
  // The same call options for every message (the engine only reads them).
  const call = { signal: sendSignal };
  const deadLetter = options.deadLetter !== undefined ? new DeadLetterFile(options.deadLetter, options.path) : undefined;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const engine = new DeliveryEngine(options.settings, {
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.retryWindowMs !== undefined ? { retryWindowMs: options.retryWindowMs } : {}),
    ...(options.ca ? { ca: options.ca } : {}),
    connections: concurrency,
    clock,
  });
  const latency = new LatencyHistogram();
  const started = performance.now();
  const progressMs = options.progressMs ?? 100;
  let lastProgress = 0;

  const notDelivered = (entry: ReplayEntry, result: DeliveryResult | undefined, failure: Failure): void => {
    if (deadLetter) {
      deadLetter.write(deadLetterLine(entry.text, failure));
      summary.deadLettered += 1;
    }
    options.onFailure?.(entry, result, failure);
  };

  const unstarted: ReplayEntry[] = [];
  // The recorded time is read only for --speed; the body bytes are always built (the exact-bytes rule).
  const parts = { time: options.speed !== undefined };

  async function* entries(): AsyncGenerator<ReplayEntry[]> {
    for await (const batch of readLineBatches(options.path, { signal: sendSignal })) {
      const out: ReplayEntry[] = [];
      for (const line of batch) {
        if (line.number < fromLine || "error" in line || bad.has(line.number)) continue;
        // Under --raw the check decides what is sent as read, so it runs again.
        const result = parseEntry(line.text, line.number, options.raw === true, parts, options.raw === true);
        if (!result.ok) continue; // changed since it was validated; validation already reported it
        if (types && (result.entry.type === undefined || !types.has(result.entry.type))) continue;
        out.push(result.entry);
      }
      if (out.length > 0) yield out;
    }
  }

  // The clock's timers are unref'd; a run waiting only on --rate/--speed or a retry must still keep the process alive.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const result = await pace(
      entries(),
      {
        concurrency,
        ...(options.rate !== undefined ? { rate: options.rate } : {}),
        ...(options.speed !== undefined ? { speed: options.speed } : {}),
        clock,
        signal: sendSignal,
      },
      {
        async run(entry) {
          summary.sent += 1;
          const begin = performance.now();
          const outcome = await engine.deliver(entry.body, call);
          const end = performance.now();
          const ms = end - begin;
          if (outcome.delivered) {
            summary.delivered += 1;
            latency.record(ms);
          } else if (outcome.interrupted) {
            summary.interrupted += 1;
            notDelivered(entry, outcome, failureOf(outcome, "interrupted"));
          } else {
            summary.failed += 1;
            latency.record(ms);
            notDelivered(entry, outcome, failureOf(outcome, undefined));
          }
          if (outcome.rounds > 1) summary.retried += 1;
          options.onMessage?.(entry, outcome, ms);
          if (options.onProgress && end - lastProgress >= progressMs) {
            lastProgress = end;
            options.onProgress({ sent: summary.sent, delivered: summary.delivered, failed: summary.failed, elapsedMs: end - started });
          }
        },
        dropped(entry) {
          // Written once the messages in flight are done, so a user's dead letters stay in file order.
          unstarted.push(entry);
        },
      },
    );

    if (result.stopped) summary.resumeLine = result.lastAdmitted ? result.lastAdmitted.line + 1 : fromLine;
  } finally {
    unstarted.sort((a, b) => a.line - b.line);
    for (const entry of unstarted) {
      summary.interrupted += 1;
      notDelivered(entry, undefined, { reason: "interrupted", attempts: 0, status: null });
      options.onMessage?.(entry, undefined, 0);
    }
    clearInterval(keepAlive);
    signal?.removeEventListener("abort", forward);
    deadLetter?.close();
    await engine.close();
  }

  summary.elapsedMs = performance.now() - started;
  summary.p50Ms = latency.quantile(0.5);
  summary.p99Ms = latency.quantile(0.99);
  summary.eventsPerSecond = summary.elapsedMs > 0 ? (summary.sent * 1000) / summary.elapsedMs : 0;
  return summary;
}

/** The dead-letter `failure` of a result: why, how many attempts, the last status. */
export function failureOf(result: DeliveryResult, reason: string | undefined): Failure {
  let attempts = 0;
  let status: number | null = null;
  const reasons: string[] = [];
  for (const url of result.urls) {
    attempts = Math.max(attempts, url.attempts);
    if (status === null && url.status !== null) status = url.status;
    if (url.error !== null) reasons.push(result.urls.length > 1 ? `${url.url}: ${url.error}` : url.error);
  }
  return { reason: reason ?? (reasons.join("; ") || "not delivered"), attempts, status };
}
