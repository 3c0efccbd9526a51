import { SCHEMES } from "../signing/schemes.js";
import type { EngineSettings } from "../delivery/deliver.js";
import { performance } from "node:perf_hooks";
import { failureOf, type Failure } from "../delivery/failure.js";
import type { DeliveryResult } from "../delivery/types.js";
import { undiciEngine } from "../delivery/undici-engine.js";
import { DEFAULT_DELIVERY_CONCURRENCY, Dispatcher, type DispatchSummary } from "../dispatch/dispatcher.js";
import { batchingFor } from "../dispatch/units.js";
import { InputError } from "../errors.js";
import { ResultsSink } from "../regress/results-sink.js";
import { readLineBatches } from "../util/ndjson.js";
import { DeadLetterFile } from "./deadletter.js";
import { deadLetterLine, parseEntry, rawEntry, type ReplayEntry } from "./envelope.js";
import { LinePlan } from "./line-bits.js";
import { scanMessage, type ScanWants } from "./scan.js";
import { LatencyHistogram } from "./stats.js";
import type { ReplayOptions, ReplaySummary } from "./types.js";
import type { Validation } from "./validation-pass.js";

/**
 * Pass 2: the lines the validation pass decided to send, as the dispatcher's source. Nothing is
 * checked or selected again: the plan says which lines go and how each is read (scanned, parsed
 * for its bytes, or taken as read under --raw). A line the plan sends that no longer reads as a
 * message (the file was rewritten meanwhile) stops the run there.
 */
export async function* sendableEntries(
  options: ReplayOptions,
  validation: Validation,
  signal: AbortSignal | undefined,
  results: ResultsSink | undefined,
): AsyncGenerator<ReplayEntry[]> {
  // The recorded time is read only for --speed; the body bytes are always built (the exact-bytes rule).
  const parts = { time: options.speed !== undefined };
  // Results lines need a message's messageId and event, --speed its timestamp: the scan reads those
  // too then. A scheme's message id needs the messageId alone (docs/schemes.md#timestamps).
  const wants: ScanWants = parts.time || results !== undefined ? "all" : sendsMessageIds(options.settings) ? "messageId" : "none";
  const last = validation.lastLine;
  if (last === 0) return;
  for await (const batch of readLineBatches(options.path, signal ? { signal } : {})) {
    const out: ReplayEntry[] = [];
    for (const line of batch) {
      if (line.number > last) break;
      const plan = validation.plan.get(line.number);
      if (plan === LinePlan.skip) continue;
      const entry = "error" in line ? undefined : entryOf(plan, line.text, line.number, parts, wants);
      // Checked good, bad now: the file changed under the run. Stop (with a resume line) rather than skip it.
      if (entry === undefined)
        throw new InputError(`line ${line.number} changed during the run and is no longer a valid message; stopped`, { file: options.name, line: line.number });
      results?.admit(entry);
      out.push(entry);
    }
    if (out.length > 0) {
      await results?.waitForRoom(signal);
      yield out;
    }
    if ((batch.at(-1)?.number ?? 0) >= last) return;
  }
}

/** Whether any target's scheme sends a message id, which is derived from each message's messageId. */
function sendsMessageIds(settings: Pick<EngineSettings, "scheme" | "targets">): boolean {
  return settings.targets.some((target) => SCHEMES[target.scheme ?? settings.scheme ?? "default"].id !== undefined);
}

function entryOf(plan: LinePlan, text: string, line: number, parts: { time: boolean }, wants: ScanWants): ReplayEntry | undefined {
  if (plan === LinePlan.asRead) return rawEntry(text, line);
  if (plan === LinePlan.canonical) {
    const scanned = scannedEntry(text, line, parts.time, wants);
    if (scanned !== undefined) return scanned;
  }
  const result = parseEntry(text, line, false, parts);
  return result.ok ? result.entry : undefined;
}

/** A canonical line: sent as read, its facts scanned from the top-level keys (one JSON.parse per line in all). */
function scannedEntry(text: string, line: number, withTime: boolean, wants: ScanWants): ReplayEntry | undefined {
  const scanned = scanMessage(text, wants);
  if (scanned === undefined) return undefined;
  let time: number | undefined;
  if (withTime && scanned.timestamp !== undefined) {
    const parsed = Date.parse(scanned.timestamp);
    if (!Number.isNaN(parsed)) time = parsed;
  }
  return {
    line,
    body: text,
    type: scanned.type,
    orderKey: scanned.orderKey,
    messageId: scanned.messageId,
    event: scanned.type === "track" ? scanned.event : undefined,
    time,
    text,
    canonical: true,
  };
}

/** Pass 2: sends through the dispatcher; dead letters, latencies and progress are its reporter. */
export async function sendFile(options: ReplayOptions, fromLine: number, validation: Validation, summary: ReplaySummary): Promise<ReplaySummary> {
  const concurrency = options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY;
  const engine = undiciEngine(options.settings, {
    timeoutMs: options.timeoutMs,
    retryWindowMs: options.retryWindowMs,
    retryRules: options.retryRules,
    ca: options.ca,
    connections: concurrency,
    clock: options.clock,
    functions: options.functions,
    onSetupProblem: options.onSetupProblem,
  });
  const reporter = new ReplayReporter(options, summary);
  try {
    const dispatcher: Dispatcher<ReplayEntry> = new Dispatcher<ReplayEntry>({
      source: sendableEntries(options, validation, options.signal, reporter.results),
      engine,
      batching: batchingFor(options.settings),
      concurrency,
      rate: options.rate,
      speed: options.speed,
      clock: options.clock,
      signal: options.signal,
      recordsFailed: reporter.deadLetter !== undefined,
      startLine: fromLine,
      hooks: {
        onResult: (entry, result, ms) => reporter.finished(entry, result, ms),
        onUnstarted: (entry) => reporter.unstarted(entry),
        onAttempt: options.onAttempt,
        keepResponse: options.keepResponse,
        captureResponse: reporter.results !== undefined,
      },
    });
    options.onSending?.(() => dispatcher.progress);
    reporter.done(await dispatcher.runToEnd());
  } finally {
    reporter.close();
    await engine.close();
  }
  return summary;
}

/** Replay's reporter: dead letters, the caller's hooks, latencies and the summary's counts. */
class ReplayReporter {
  readonly deadLetter: DeadLetterFile | undefined;
  readonly results: ResultsSink | undefined;
  private readonly latency = new LatencyHistogram();
  private readonly started = performance.now();

  constructor(
    private readonly options: ReplayOptions,
    private readonly summary: ReplaySummary,
  ) {
    this.deadLetter = options.deadLetter !== undefined ? new DeadLetterFile(options.deadLetter, options.path) : undefined;
    const wantsResults = options.results !== undefined || options.onResults !== undefined;
    this.results = wantsResults
      ? new ResultsSink({ path: options.results, input: options.path, secret: options.settings.secrets }, options.onResults)
      : undefined;
  }

  finished(entry: ReplayEntry, result: DeliveryResult, ms: number): void {
    if (!result.interrupted) this.latency.record(ms);
    if (result.interrupted) this.options.onFailure?.(entry, result, failureOf(result, { reason: "interrupted" }));
    else if (!result.delivered && !result.skipped) this.notDelivered(entry, result, failureOf(result));
    this.options.onMessage?.(entry, result, ms);
    this.results?.finished(entry, result);
  }

  unstarted(entry: ReplayEntry): void {
    this.options.onFailure?.(entry, undefined, { reason: "interrupted", attempts: 0, status: null });
    this.options.onMessage?.(entry, undefined, 0);
    this.results?.dropped(entry);
  }

  done(result: DispatchSummary): void {
    const s = this.summary;
    s.sent = result.sent;
    s.delivered = result.delivered;
    s.skipped = result.skipped;
    s.failed = result.failed;
    s.interrupted = result.interrupted + result.unstarted;
    s.retried = result.retried;
    s.resumeLine = result.resumeLine;
    s.deliveredAfterResume = result.deliveredAfterResume;
    if (result.error) s.error = result.error;
    s.elapsedMs = performance.now() - this.started;
    s.p50Ms = this.latency.quantile(0.5);
    s.p99Ms = this.latency.quantile(0.99);
    s.eventsPerSecond = s.elapsedMs > 0 ? (s.sent * 1000) / s.elapsedMs : 0;
  }

  close(): void {
    this.deadLetter?.close();
    this.results?.close();
  }

  /** Finally failed: dead-lettered (interrupted messages never are: the resume line covers them). */
  private notDelivered(entry: ReplayEntry, result: DeliveryResult | undefined, failure: Failure): void {
    if (this.deadLetter) {
      this.deadLetter.write(deadLetterLine(entry.text, failure, this.options.settings.secrets, entry.body));
      this.summary.deadLettered += 1;
    }
    this.options.onFailure?.(entry, result, failure);
  }
}
