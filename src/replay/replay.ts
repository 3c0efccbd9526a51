import { performance } from "node:perf_hooks";
import type { EngineSettings } from "../delivery/deliver.js";
import { failureOf, type Failure } from "../delivery/failure.js";
import type { AttemptEvent, DeliveryResult } from "../delivery/types.js";
import { undiciEngine } from "../delivery/wire.js";
import { DEFAULT_DELIVERY_CONCURRENCY, Dispatcher, type DispatchProgress, type DispatchSummary } from "../dispatch/dispatcher.js";
import { InputError, UsageError } from "../errors.js";
import type { MessageType } from "../messages/schemas.js";
import type { Clock } from "../util/clock.js";
import { DeadLetterFile } from "./deadletter.js";
import { checkLine, deadLetterLine, parseEntry, type ReplayEntry } from "./envelope.js";
import { LineBits } from "./line-bits.js";
import { readLineBatches } from "../util/ndjson.js";
import type { ResultLine } from "../regress/results.js";
import { ResultsSink } from "../regress/results-sink.js";
import { scanMessage } from "./scan.js";
import { createSelection, type Selection, type SelectionOptions } from "./select.js";
import { LatencyHistogram } from "./stats.js";

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
  /** --line, --message-id, --user-id, --shard: lines left out are counted as filtered. */
  select?: Omit<SelectionOptions, "types" | "fromLine">;
  /** Append one results line per finished message to this file, in input order (replay --results). */
  results?: string;
  /** The --compare file: may not be the results file. */
  compareFile?: string;
  /** Results lines as they are released, in input order (replay --compare); asks for the answers like `results`. */
  onResults?: (lines: readonly ResultLine[]) => void;
  skipInvalid?: boolean;
  /** A run that would send nothing is not an error (docs/exit-codes.md#nothing-to-send). */
  allowEmpty?: boolean;
  deadLetter?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
  clock?: Clock;
  /** Send lines that are not known messages as read (replay --raw): they become warnings, not bad lines. */
  raw?: boolean;
  /** Under `dryRun`: each message that would be sent, in file order (nothing is sent). */
  onDryRun?: (entry: ReplayEntry) => void;
  /** A bad line, reported as found. */
  onInvalid?: (line: number, reason: string) => void;
  /** Under `raw`: a line that is not a known message, sent anyway. */
  onWarning?: (line: number, reason: string) => void;
  /** A message that was not delivered (finally failed, or interrupted: then `failure.reason` is "interrupted"). */
  onFailure?: (entry: ReplayEntry, result: DeliveryResult | undefined, failure: Failure) => void;
  /** Every finished message, for per-message reports (JUnit). */
  onMessage?: (entry: ReplayEntry, result: DeliveryResult | undefined, ms: number) => void;
  /** Sending starts: live counts for a status line, read as often as the caller likes. */
  onSending?: (progress: () => DispatchProgress) => void;
  /** After each attempt of a message (replay --verbose, the retry-window notice). */
  onAttempt?: (entry: ReplayEntry, event: AttemptEvent) => void;
  /** Keep response headers and bodies in the attempt events (--verbose shows them). */
  keepResponse?: boolean;
}

export interface ReplaySummary {
  /** Lines read, blank ones included. */
  lines: number;
  /** Valid messages from --from-line on that pass the selectors (--type, --line, …). */
  messages: number;
  invalid: number;
  filtered: number;
  /** Handed to the delivery engine. */
  sent: number;
  delivered: number;
  /** Finally failed (dead-lettered when --dead-letter is given). */
  failed: number;
  /** Not delivered because of the interruption (never dead-lettered: they are at or after the resume line). */
  interrupted: number;
  /** Delivered or failed after more than one round. */
  retried: number;
  deadLettered: number;
  p50Ms: number;
  p99Ms: number;
  elapsedMs: number;
  eventsPerSecond: number;
  dryRun: boolean;
  /** Set when interrupted: the low-water --from-line (docs/recording.md#resume); resuming there may repeat, never skip. */
  resumeLine: number | undefined;
  /** Lines after `resumeLine` already delivered (resuming sends them again). */
  deliveredAfterResume: number;
  /**
   * What stopped the sending pass part way (a dead-letter or results file that cannot be
   * written, the input unreadable): the run ended like an interruption, with `resumeLine` set.
   */
  error?: { value: unknown };
}

/** What the validation pass found. */
interface Validation {
  lines: number;
  messages: number;
  filtered: number;
  bad: Set<number>;
  /** Bare messages whose line is JSON.stringify's own output (see checkLine). */
  canonical: LineBits;
}

/**
 * Replays an NDJSON file: a validation pass (nothing is sent when a line is bad
 * unless `skipInvalid`), then a sending pass through the dispatcher. Both
 * passes stream, so memory stays constant.
 */
export async function replay(options: ReplayOptions): Promise<ReplaySummary> {
  const fromLine = options.fromLine ?? 1;
  const validation = await validateFile(options, fromLine);
  if (validation.bad.size > 0 && !options.skipInvalid && !options.signal?.aborted) {
    const n = validation.bad.size;
    throw new InputError(`${n} bad line${n === 1 ? "" : "s"}; nothing sent (--skip-invalid sends the rest)`, { file: options.name });
  }
  const summary = emptySummary(validation, options.dryRun === true);
  // Interrupted while validating: nothing was sent, resume where this run started.
  if (options.signal?.aborted) return { ...summary, resumeLine: fromLine };
  if (validation.messages === 0 && options.allowEmpty !== true) throw nothingToSend(options, fromLine, validation);
  if (options.dryRun) {
    if (options.onDryRun) for await (const batch of sendableEntries(options, fromLine, validation, options.signal, undefined)) batch.forEach(options.onDryRun);
    return summary;
  }
  return sendFile(options, fromLine, validation, summary);
}

/** Pass 1: every line from --from-line on, checked; bad ones reported as found. */
async function validateFile(options: ReplayOptions, fromLine: number): Promise<Validation> {
  const selection = selectionOf(options, fromLine);
  const found: Validation = { lines: 0, messages: 0, filtered: 0, bad: new Set(), canonical: new LineBits() };
  for await (const batch of readLineBatches(options.path, options.signal ? { signal: options.signal } : {})) {
    for (const line of batch) {
      found.lines = line.number;
      // Like lines before --from-line, lines outside --line are neither checked nor counted.
      if (!selection.lineMayMatch(line.number)) continue;
      const checked = "error" in line ? { ok: false as const, reason: line.error } : checkLine(line.text, line.number, options.raw === true, options.dryRun !== true);
      if (!checked.ok) {
        found.bad.add(line.number);
        options.onInvalid?.(line.number, checked.reason);
        continue;
      }
      if (checked.warning !== undefined) options.onWarning?.(line.number, checked.warning);
      if (checked.canonical) found.canonical.add(line.number);
      if (selection.matches({ line: line.number, type: checked.type ?? "", userId: checked.orderKey, messageId: checked.messageId })) found.messages += 1;
      else found.filtered += 1;
    }
  }
  return found;
}

/** Why a run would send nothing: a mistake in a script far more often than not, so exit 2 unless --allow-empty. */
function nothingToSend(options: ReplayOptions, fromLine: number, found: Validation): Error {
  const allow = "; nothing sent (--allow-empty accepts that)";
  if (fromLine > 1 && fromLine > found.lines) {
    return new UsageError(`nothing to send: --from-line ${fromLine} is past the end of ${options.name} (${found.lines} lines)${allow}`, { field: "fromLine" });
  }
  const reason =
    found.filtered > 0 ? `no line matched the filters (${found.filtered} filtered out)` : found.bad.size > 0 ? `every line was skipped as invalid (${found.bad.size})` : "the input is empty";
  return new InputError(`nothing to send: ${reason}${allow}`, { file: options.name });
}

/** Every selector of the run; a line whose type is unknown (--raw) matches no --type. */
function selectionOf(options: ReplayOptions, fromLine: number): Selection {
  return createSelection({ ...options.select, ...(options.types ? { types: options.types } : {}), fromLine });
}

function emptySummary(validation: Validation, dryRun: boolean): ReplaySummary {
  return {
    lines: validation.lines,
    messages: validation.messages,
    invalid: validation.bad.size,
    filtered: validation.filtered,
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
    dryRun,
    resumeLine: undefined,
    deliveredAfterResume: 0,
  };
}

/** Pass 2: the valid, selected lines as the dispatcher's source. */
async function* sendableEntries(
  options: ReplayOptions,
  fromLine: number,
  validation: Validation,
  signal: AbortSignal | undefined,
  results: ResultsSink | undefined,
): AsyncGenerator<ReplayEntry[]> {
  const selection = selectionOf(options, fromLine);
  // The recorded time is read only for --speed; the body bytes are always built (the exact-bytes rule).
  const parts = { time: options.speed !== undefined };
  // A canonical line is sent as read, its type and user scanned rather than parsed (one JSON.parse per line in all).
  // The scan gives no messageId or event, so --results and --message-id take the parsed path.
  const scan = !parts.time && options.raw !== true && results === undefined && !(options.select?.messageIds?.length);
  // Only the lines the validation pass checked: lines appended since (a live recording) wait for the next run.
  const last = Math.min(selection.lastLine ?? Infinity, validation.lines);
  for await (const batch of readLineBatches(options.path, signal ? { signal } : {})) {
    const out: ReplayEntry[] = [];
    for (const line of batch) {
      if (line.number > last) break;
      if (!selection.lineMayMatch(line.number) || validation.bad.has(line.number)) continue;
      const entry = "error" in line ? undefined : ((scan && validation.canonical.has(line.number) ? scannedEntry(line.text, line.number) : undefined) ?? parsedEntry(options, line.text, line.number, parts));
      // Checked good, bad now: the file changed under the run. Stop (with a resume line) rather than skip it.
      if (entry === undefined) throw new InputError(`line ${line.number} changed during the run and is no longer a valid message; stopped`, { file: options.name, line: line.number });
      if (!selection.matches({ line: entry.line, type: entry.type ?? "", userId: entry.orderKey, messageId: entry.messageId })) continue;
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

function scannedEntry(text: string, line: number): ReplayEntry | undefined {
  const scanned = scanMessage(text);
  return scanned && { line, body: text, type: scanned.type, orderKey: scanned.orderKey, messageId: undefined, event: undefined, time: undefined, text };
}

function parsedEntry(options: ReplayOptions, text: string, line: number, parts: { time: boolean }): ReplayEntry | undefined {
  // Under --raw the check decides what is sent as read, so it runs again.
  const result = parseEntry(text, line, options.raw === true, parts, options.raw === true);
  return result.ok ? result.entry : undefined;
}

/** Pass 2: sends through the dispatcher; dead letters, latencies and progress are its reporter. */
async function sendFile(options: ReplayOptions, fromLine: number, validation: Validation, summary: ReplaySummary): Promise<ReplaySummary> {
  const concurrency = options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY;
  const engine = undiciEngine(options.settings, {
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.retryWindowMs !== undefined ? { retryWindowMs: options.retryWindowMs } : {}),
    ...(options.ca ? { ca: options.ca } : {}),
    connections: concurrency,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const reporter = new ReplayReporter(options, summary);
  try {
    const dispatcher: Dispatcher<ReplayEntry> = new Dispatcher<ReplayEntry>({
      source: sendableEntries(options, fromLine, validation, options.signal, reporter.results),
      engine,
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
        ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
        ...(options.keepResponse ? { keepResponse: true } : {}),
        ...(reporter.results ? { captureResponse: true } : {}),
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
    this.results = wantsResults ? new ResultsSink({ path: options.results, input: options.path, compare: options.compareFile, secret: options.settings.secret }, options.onResults) : undefined;
  }

  finished(entry: ReplayEntry, result: DeliveryResult, ms: number): void {
    if (!result.interrupted) this.latency.record(ms);
    if (result.interrupted) this.options.onFailure?.(entry, result, failureOf(result, { reason: "interrupted" }));
    else if (!result.delivered) this.notDelivered(entry, result, failureOf(result));
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
      this.deadLetter.write(deadLetterLine(entry.text, failure, this.options.settings.secret, entry.body));
      this.summary.deadLettered += 1;
    }
    this.options.onFailure?.(entry, result, failure);
  }
}
