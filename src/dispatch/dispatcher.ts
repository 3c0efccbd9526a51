import { setMaxListeners } from "node:events";
import type { DeliverCall, DeliveryResult } from "../delivery/types.js";
import { systemClock, type Clock } from "../util/clock.js";
import { holdProcess } from "../util/hold-process.js";
import { Batcher } from "./batcher.js";
import { defaultMaxBuffered, Scheduler } from "./scheduler.js";
import { ResumeMark } from "./resume.js";
import type { DispatchEntry, DispatchOptions, DispatchProgress, DispatchSummary, MessageHooks, Slot } from "./types.js";
import { EventLedger, requestOf, unitsOf, type Unit } from "./units.js";

export type { DispatchEntry, DispatchOptions, DispatchProgress, DispatchSummary, MessageHooks } from "./types.js";

/**
 * Deliveries in flight at once where many independent messages wait (replay,
 * serve): enough to hide a slow receiver's latency, well under its connection
 * limits.
 */
export const DEFAULT_DELIVERY_CONCURRENCY = 64;

/** What a message keeps across its attempts and re-sends (DeliverCall's identity): --dry-run prints the request it is sent with. */
export function identityOf(entry: Pick<DispatchEntry, "messageId" | "recordedId" | "type">): NonNullable<DeliverCall["identity"]> {
  return { id: entry.recordedId, seed: entry.messageId, event: entry.type };
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
  /** Messages, or Webhooks (Actions) requests, in flight: for the status line's retry counts. */
  private readonly inFlight = new Set<{ index: number; nextAttemptAt: number | undefined }>();
  /** With batching: where each message read stands. */
  private ledger: EventLedger<E> | undefined;
  private readonly unstarted: Slot<E>[] = [];
  private readonly resume: ResumeMark;
  private readonly stop = new AbortController();
  private counts = { sent: 0, delivered: 0, skipped: 0, failed: 0, interrupted: 0, retried: 0 };
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
    let oldest: { index: number; nextAttemptAt: number | undefined } | undefined;
    for (const slot of this.inFlight) {
      if (slot.nextAttemptAt === undefined) continue;
      retrying += 1;
      if (oldest === undefined || slot.index < oldest.index) oldest = slot;
    }
    const { sent, delivered, skipped, failed } = this.counts;
    return { sent, delivered, skipped, failed, retrying, oldestNextAttemptAt: oldest?.nextAttemptAt };
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
      const limits = { concurrency: this.options.concurrency, rate: this.options.rate, speed: this.options.speed, clock: this.clock, signal: this.stop.signal };
      const { batching } = this.options;
      const scheduler: { run(): Promise<{ stopped: boolean }> } = batching
        ? this.unitScheduler(batching, limits)
        : new Scheduler<Slot<E>>(this.slots(batches(this.options.source)), limits, {
            run: (slot) => this.deliver(slot),
            dropped: (slot) => this.unstarted.push(slot),
          });
      let stopped: boolean;
      let error: { value: unknown } | undefined;
      try {
        stopped = (await scheduler.run()).stopped;
      } catch (thrown) {
        stopped = true;
        error = { value: thrown };
      }
      const unfinished = this.reportUnfinished();
      const late = this.reportUnstarted();
      error ??= unfinished ?? late;
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
    let settled = false;
    try {
      this.hooks.onStart?.(entry);
      const began = performance.now();
      const result = await this.options.engine.deliver(entry.body, this.callFor(slot, entry, entry.firstAttemptAt));
      this.inFlight.delete(slot);
      settled = true;
      this.settle(slot, result, performance.now() - began);
    } finally {
      this.inFlight.delete(slot);
      if (!settled) this.resume.finished(entry.line, slot.index, "interrupted");
    }
  }

  /**
   * A message's result: counted, then reported. Not done until its reporter has it: an error
   * there (a dead letter that cannot be written) leaves the message at or after the resume line.
   */
  private settle(slot: Slot<E>, result: DeliveryResult, ms: number): void {
    this.count(result);
    let outcome: "delivered" | "failed" | "interrupted" = "interrupted";
    // A skipped message (a destination function declined it) is done, as a delivered one is.
    const done = result.delivered || result.skipped === true;
    try {
      this.hooks.onResult?.(slot.entry, result, ms);
      outcome = done ? "delivered" : result.interrupted ? "interrupted" : "failed";
    } finally {
      this.resume.finished(slot.entry.line, slot.index, outcome, done);
    }
  }

  /** Webhooks (Actions) with batches: messages become each target's requests (docs/actions.md#batches). */
  private unitScheduler(batching: NonNullable<DispatchOptions<E>["batching"]>, limits: ConstructorParameters<typeof Scheduler>[1]): Scheduler<Unit<E>> {
    const { targets } = batching;
    const ledger = new EventLedger<E>(targets.length, (slot, result, ms) => this.settle(slot, result, ms));
    this.ledger = ledger;
    const sizes = targets.map((target) => target.batchSize ?? 1);
    const source = unitsOf(this.slots(batches(this.options.source)), targets, new Batcher<Slot<E>>(sizes, batching.waitMs), this.clock, (slot) =>
      ledger.read(slot),
    );
    // Requests waiting to start, in events: about what the scheduler keeps of single messages.
    const maxBuffered = Math.max(targets.length * 4, Math.ceil(defaultMaxBuffered(limits.concurrency) / Math.max(...sizes)));
    return new Scheduler<Unit<E>>(source, { ...limits, maxBuffered }, { run: (unit) => this.deliverUnit(unit, ledger), dropped: () => {} });
  }

  private async deliverUnit(unit: Unit<E>, ledger: EventLedger<E>): Promise<void> {
    const deliverContent = this.options.engine.deliverContent;
    if (deliverContent === undefined) throw new Error("batching needs an engine with deliverContent");
    this.inFlight.add(unit);
    try {
      let firstAttemptAt: number | undefined;
      for (const slot of unit.slots) {
        const at = slot.entry.firstAttemptAt;
        if (at !== undefined && (firstAttemptAt === undefined || at < firstAttemptAt)) firstAttemptAt = at;
        if (!ledger.start(slot)) continue;
        this.counts.sent += 1;
        this.hooks.onStart?.(slot.entry);
      }
      const call = this.callFor(unit, (unit.slots[0] as Slot<E>).entry, firstAttemptAt);
      if (unit.target.function !== undefined) return await this.deliverFunctionBatch(unit, ledger, call);
      const { content, refused } = requestOf(unit);
      const result = content === undefined ? undefined : await deliverContent.call(this.options.engine, unit.target, content, call);
      this.inFlight.delete(unit);
      ledger.finish(unit, result, refused);
    } finally {
      this.inFlight.delete(unit);
    }
  }

  /** A destination function's batch (docs/functions.md#batches): each event's own result back to its message. */
  private async deliverFunctionBatch(unit: Unit<E>, ledger: EventLedger<E>, call: DeliverCall): Promise<void> {
    const deliverBatch = this.options.engine.deliverBatch;
    if (deliverBatch === undefined) throw new Error("a function's batches need an engine with deliverBatch");
    const results = await deliverBatch.call(
      this.options.engine,
      unit.target,
      unit.slots.map((slot) => slot.entry.body),
      call,
    );
    this.inFlight.delete(unit);
    ledger.finishEach(unit, (position) => results[position]);
  }

  private callFor(holder: { nextAttemptAt: number | undefined }, entry: E, firstAttemptAt: number | undefined): DeliverCall {
    const onAttempt = this.hooks.onAttempt;
    // Built without spreads: this runs once per message.
    const call: DeliverCall = {
      signal: this.stop.signal,
      onAttempt: (event) => {
        holder.nextAttemptAt = event.retryInMs !== undefined ? this.clock.now() + event.retryInMs : undefined;
        onAttempt?.(entry, event);
      },
    };
    if (firstAttemptAt !== undefined) call.firstAttemptAt = firstAttemptAt;
    if (entry.recorded !== undefined) call.recorded = entry.recorded;
    if (entry.canonical === true) call.canonical = true;
    if (entry.messageId !== undefined || entry.recordedId !== undefined || entry.type !== undefined) call.identity = identityOf(entry);
    if (this.options.cutAttempts) call.cutAttempts = true;
    if (this.hooks.keepResponse) call.keepResponse = true;
    if (this.hooks.captureResponse) call.captureResponse = true;
    return call;
  }

  private count(result: DeliveryResult): void {
    if (result.rounds > 1) this.counts.retried += 1;
    if (result.delivered) this.counts.delivered += 1;
    else if (result.interrupted) this.counts.interrupted += 1;
    else if (result.skipped) this.counts.skipped += 1;
    else this.counts.failed += 1;
  }

  /**
   * With batching, once the run stopped: the messages some of whose requests never finished are
   * interrupted (reported as such), those none of whose requests started are unstarted.
   */
  private reportUnfinished(): { value: unknown } | undefined {
    let error: { value: unknown } | undefined;
    for (const { slot, started, result } of this.ledger?.unfinished() ?? []) {
      if (!started) {
        this.unstarted.push(slot);
        continue;
      }
      try {
        this.settle(slot, result, 0);
      } catch (thrown) {
        error ??= { value: thrown };
      }
    }
    return error;
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
    // Skipped messages are done too: the mark counts them with the delivered ones.
    const mark = stopped ? this.resume.mark(this.nextUnread(), this.counts.delivered + this.counts.skipped) : undefined;
    return {
      ...this.counts,
      unstarted: this.unstarted.length,
      stopped,
      resumeLine: mark?.line,
      deliveredAfterResume: mark?.deliveredAfter ?? 0,
    };
  }

  /** The first message not admitted: the line after the last one admitted (started or dropped); with batching, the last one read. */
  private nextUnread(): { line: number; index: number } {
    if (this.ledger !== undefined) {
      const last = this.ledger.lastRead;
      return last === undefined ? { line: this.options.startLine ?? 1, index: 0 } : { line: last.entry.line + 1, index: last.index + 1 };
    }
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
