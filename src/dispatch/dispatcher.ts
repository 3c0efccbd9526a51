import { setMaxListeners } from "node:events";
import type { DeliveryEngine } from "../delivery/deliver.js";
import type { AttemptEvent, DeliverCall, DeliveryResult } from "../delivery/types.js";
import { systemClock, type Clock } from "../util/clock.js";
import { holdProcess } from "../util/keep-alive.js";
import { Scheduler } from "./scheduler.js";
import { ResumeMark } from "./resume.js";

/**
 * Deliveries in flight at once where many independent messages wait (replay,
 * serve): enough to hide a slow receiver's latency, well under its connection
 * limits.
 */
export const DEFAULT_DELIVERY_CONCURRENCY = 64;

/** One message to deliver. */
export interface DispatchEntry {
  /** Its position in the source (1-based line or sequence number), for the resume line. */
  line: number;
  /** Messages with the same key are delivered one at a time, in source order (per-user order). */
  orderKey: string | undefined;
  /** The exact bytes to send. */
  body: string | Uint8Array;
  /** Recorded epoch ms, for `speed`. */
  time: number | undefined;
  /** When resuming a delivery (serve after restart): its first attempt's epoch ms. */
  firstAttemptAt?: number | undefined;
}

/** Per-message hooks: each names its message, so nothing maps bodies back to messages. */
export interface MessageHooks<E extends DispatchEntry> {
  /** The message's delivery starts. */
  onStart?(entry: E): void;
  /** After each attempt of the message. */
  onAttempt?(entry: E, event: AttemptEvent): void;
  /** The message finished: delivered, given up, or interrupted while in flight. */
  onResult?(entry: E, result: DeliveryResult, ms: number): void;
  /** Admitted but never started (the run was stopped); called after the messages in flight finished, in line order. */
  onUnstarted?(entry: E): void;
  /** Keep response headers and bodies in the attempt events (only a reporter that shows them asks). */
  keepResponse?: boolean;
  /** Keep each URL's final answer in the result (replay --results/--compare). */
  captureResponse?: boolean;
}

export interface DispatchOptions<E extends DispatchEntry> {
  /** Batches (a streaming reader) or a plain list of messages. */
  source: AsyncIterable<readonly E[]> | Iterable<E>;
  engine: Pick<DeliveryEngine, "deliver">;
  concurrency: number;
  /** Starts per second. */
  rate?: number | undefined;
  /** Keep the recorded spacing, this many times faster. */
  speed?: number | undefined;
  clock?: Clock | undefined;
  /** Stops the run: retry waits end, admitted messages not started are handed to onUnstarted. */
  signal?: AbortSignal | undefined;
  hooks?: MessageHooks<E>;
  /**
   * Messages that finally failed are recorded elsewhere (a dead-letter file), so they count as
   * done for the resume line. Interrupted and unstarted messages are never done.
   */
  recordsFailed?: boolean;
  /** The line to resume from when nothing was read (the run's first line). Default 1. */
  startLine?: number;
}

/** Live counts for a status line. */
export interface DispatchProgress {
  /** Deliveries started. */
  sent: number;
  delivered: number;
  /** Given up (not interrupted). */
  failed: number;
  /** In flight and waiting for another attempt. */
  retrying: number;
  /** Epoch ms of the next attempt of the oldest message waiting to retry, if any. */
  oldestNextAttemptAt: number | undefined;
}

export interface DispatchSummary {
  sent: number;
  delivered: number;
  failed: number;
  /** In flight when the run stopped: not delivered, not given up. */
  interrupted: number;
  /** Admitted and never started because the run stopped. */
  unstarted: number;
  /** Messages that took more than one round (interrupted ones included). */
  retried: number;
  /** The signal stopped the run. */
  stopped: boolean;
  /**
   * Set when stopped: the low-water mark, the lowest line neither delivered nor recorded as
   * failed (docs/recording.md#resume). Resuming there may repeat, never skip.
   */
  resumeLine: number | undefined;
  /** Lines after `resumeLine` already delivered (they will be sent again). */
  deliveredAfterResume: number;
  /** Set by `runToEnd` when the source or a hook threw: the run stopped as if interrupted. */
  error?: { value: unknown };
}

/** A message as the scheduler holds it: with its 0-based position in the source. */
interface Slot<E extends DispatchEntry> {
  entry: E;
  index: number;
  orderKey: string | undefined;
  time: number | undefined;
  /** Epoch ms of the next attempt while waiting to retry. */
  nextAttemptAt: number | undefined;
}

/**
 * Delivers a source of messages through the engine: bounded concurrency,
 * per-key order, optional pacing, per-message hooks, one summary with a
 * low-water resume line. `send`, `replay`, `audience sync`, serve's worker and
 * `demo` are each a source and a reporter around it.
 */
export class Dispatcher<E extends DispatchEntry> {
  private readonly clock: Clock;
  private readonly hooks: MessageHooks<E>;
  private readonly inFlight = new Set<Slot<E>>();
  private readonly unstarted: Slot<E>[] = [];
  private readonly resume: ResumeMark;
  private readonly stop = new AbortController();
  private counts = { sent: 0, delivered: 0, failed: 0, interrupted: 0, retried: 0 };
  private read = 0;
  private lastStarted: Slot<E> | undefined;

  constructor(private readonly options: DispatchOptions<E>) {
    this.clock = options.clock ?? systemClock;
    this.hooks = options.hooks ?? {};
    this.resume = new ResumeMark(options.recordsFailed === true);
    // Every message in flight listens on the stop signal (retry waits): room for that many listeners.
    setMaxListeners(0, this.stop.signal);
  }

  get progress(): DispatchProgress {
    let retrying = 0;
    let oldest: Slot<E> | undefined;
    for (const slot of this.inFlight) {
      if (slot.nextAttemptAt === undefined) continue;
      retrying += 1;
      if (oldest === undefined || slot.index < oldest.index) oldest = slot;
    }
    const { sent, delivered, failed } = this.counts;
    return { sent, delivered, failed, retrying, oldestNextAttemptAt: oldest?.nextAttemptAt };
  }

  /** Runs to the summary; an error from the source or a hook rejects (after the messages in flight finished). */
  async run(): Promise<DispatchSummary> {
    const summary = await this.runToEnd();
    if (summary.error) throw summary.error.value;
    return summary;
  }

  /**
   * Like `run`, but an error from the source or a hook (a dead-letter file that cannot be
   * written) ends the run like an interruption: the summary has the error and a resume line,
   * and the message whose hook threw counts as not done.
   */
  async runToEnd(): Promise<DispatchSummary> {
    const signal = this.options.signal;
    const forward = (): void => this.stop.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener("abort", forward, { once: true });
    // The clock's timers are unref'd; a run waiting only on --rate/--speed or a retry must keep the process alive.
    const release = holdProcess();
    try {
      const scheduler = new Scheduler<Slot<E>>(
        this.slots(batches(this.options.source)),
        { concurrency: this.options.concurrency, rate: this.options.rate, speed: this.options.speed, clock: this.clock, signal: this.stop.signal },
        { run: (slot) => this.deliver(slot), dropped: (slot) => this.unstarted.push(slot) },
      );
      let stopped: boolean;
      let error: { value: unknown } | undefined;
      try {
        stopped = (await scheduler.run()).stopped;
      } catch (thrown) {
        stopped = true;
        error = { value: thrown };
      }
      const late = this.reportUnstarted();
      error ??= late;
      return { ...this.summary(stopped), ...(error ? { error } : {}) };
    } finally {
      release();
      signal?.removeEventListener("abort", forward);
    }
  }

  /** Numbers the messages as they are read; the scheduler takes them in this order. */
  private async *slots(source: AsyncIterable<readonly E[]>): AsyncGenerator<Slot<E>[]> {
    for await (const batch of source) {
      yield batch.map((entry) => ({ entry, index: this.read++, orderKey: entry.orderKey, time: entry.time, nextAttemptAt: undefined }));
    }
  }

  private async deliver(slot: Slot<E>): Promise<void> {
    const { entry } = slot;
    if (this.lastStarted === undefined || slot.index > this.lastStarted.index) this.lastStarted = slot;
    this.inFlight.add(slot);
    this.counts.sent += 1;
    // Not done until its reporter has it: an error here (a dead letter that cannot be written)
    // leaves the message at or after the resume line.
    let outcome: "delivered" | "failed" | "interrupted" = "interrupted";
    let delivered = false;
    try {
      this.hooks.onStart?.(entry);
      const began = performance.now();
      const result = await this.options.engine.deliver(entry.body, this.callFor(slot));
      this.inFlight.delete(slot);
      this.count(result);
      delivered = result.delivered;
      this.hooks.onResult?.(entry, result, performance.now() - began);
      outcome = result.delivered ? "delivered" : result.interrupted ? "interrupted" : "failed";
    } finally {
      this.inFlight.delete(slot);
      this.resume.finished(entry.line, slot.index, outcome, delivered);
    }
  }

  private callFor(slot: Slot<E>): DeliverCall {
    const onAttempt = this.hooks.onAttempt;
    const { entry } = slot;
    // Built without spreads: this runs once per message.
    const call: DeliverCall = {
      signal: this.stop.signal,
      onAttempt: (event) => {
        slot.nextAttemptAt = event.retryInMs !== undefined ? this.clock.now() + event.retryInMs : undefined;
        onAttempt?.(entry, event);
      },
    };
    if (entry.firstAttemptAt !== undefined) call.firstAttemptAt = entry.firstAttemptAt;
    if (this.hooks.keepResponse) call.keepResponse = true;
    if (this.hooks.captureResponse) call.captureResponse = true;
    return call;
  }

  private count(result: DeliveryResult): void {
    if (result.rounds > 1) this.counts.retried += 1;
    if (result.delivered) this.counts.delivered += 1;
    else if (result.interrupted) this.counts.interrupted += 1;
    else this.counts.failed += 1;
  }

  /** Messages admitted and never started, in line order once the ones in flight are done; the first hook error, if any. */
  private reportUnstarted(): { value: unknown } | undefined {
    this.unstarted.sort((a, b) => a.index - b.index);
    let error: { value: unknown } | undefined;
    for (const slot of this.unstarted) {
      this.resume.finished(slot.entry.line, slot.index, "interrupted");
      try {
        this.hooks.onUnstarted?.(slot.entry);
      } catch (thrown) {
        error ??= { value: thrown };
      }
    }
    return error;
  }

  private summary(stopped: boolean): DispatchSummary {
    const mark = stopped ? this.resume.mark(this.nextUnread(), this.counts.delivered) : undefined;
    return {
      ...this.counts,
      unstarted: this.unstarted.length,
      stopped,
      resumeLine: mark?.line,
      deliveredAfterResume: mark?.deliveredAfter ?? 0,
    };
  }

  /** The first message not admitted: the line after the last one admitted (started or dropped). */
  private nextUnread(): { line: number; index: number } {
    const lastDropped = this.unstarted.at(-1);
    const last = lastDropped !== undefined && (this.lastStarted === undefined || lastDropped.index > this.lastStarted.index) ? lastDropped : this.lastStarted;
    if (last === undefined) return { line: this.options.startLine ?? 1, index: 0 };
    return { line: last.entry.line + 1, index: last.index + 1 };
  }
}

/** Runs a dispatcher to its summary. */
export function dispatch<E extends DispatchEntry>(options: DispatchOptions<E>): Promise<DispatchSummary> {
  return new Dispatcher(options).run();
}

function batches<E>(source: AsyncIterable<readonly E[]> | Iterable<E>): AsyncIterable<readonly E[]> {
  if (Symbol.asyncIterator in source) return source;
  return (async function* list(): AsyncGenerator<readonly E[]> {
    yield [...source];
  })();
}
