import { systemClock, type Clock } from "../util/clock.js";
import { ReadyHeap } from "./heap.js";
import { KeyGate } from "./key-gate.js";
import { MultiKeyGate } from "./multi-key-gate.js";
import { RecordedSpacing, TokenBucket, Wakeup } from "./pacing.js";
import { SourceCursor } from "./source-cursor.js";

/**
 * The dispatcher's scheduler (pure logic on an injected clock): at most
 * `concurrency` items in flight, starts limited to `rate` per second (token
 * bucket), admission following the recorded spacing sped up `speed` times, and
 * one item at a time per order key, in source order. Buffering is bounded by
 * `maxBuffered` (items that could start, by `concurrency`), so memory stays
 * constant however long the source is.
 */

export interface Schedulable {
  /** Items with the same key run one at a time, in source order. */
  orderKey: string | undefined;
  /**
   * Instead of `orderKey`, several keys (a Webhooks (Actions) batch holds each of its users): the
   * item runs only once every earlier item sharing one of them finished. A run uses one or the other.
   */
  orderKeys?: readonly string[] | undefined;
  /** Recorded epoch ms, for `speed`. */
  time: number | undefined;
}

export interface SchedulerOptions {
  concurrency: number;
  /** Starts per second. */
  rate?: number | undefined;
  /** Keep the recorded spacing, this many times faster. */
  speed?: number | undefined;
  /** Admitted items waiting to start (per-key queues included). */
  maxBuffered?: number | undefined;
  clock?: Clock | undefined;
  /** Stops admission; admitted items not yet started are handed to `dropped`. */
  signal?: AbortSignal | undefined;
}

export interface SchedulerHandlers<T> {
  /** Runs one item. Must resolve (not reject) once the item is finished. */
  run(item: T): Promise<void>;
  /** An admitted item that never started because the signal stopped the run. */
  dropped(item: T): void;
}

export interface SchedulerResult<T> {
  /** True when the signal stopped the run. */
  stopped: boolean;
  /** The last item taken from the source (started, or dropped on stop). */
  lastAdmitted: T | undefined;
}

export function defaultMaxBuffered(concurrency: number): number {
  // Enough lookahead for other users to go on while some wait; small enough
  // that an interruption has little admitted-but-unstarted work to hand back.
  return Math.max(256, concurrency * 8);
}

/** Runs the items of a source under the limits above; see the module comment. */
export class Scheduler<T extends Schedulable> {
  private readonly clock: Clock;
  private readonly concurrency: number;
  private readonly maxBuffered: number;
  private readonly bucket: TokenBucket | undefined;
  private readonly spacing: RecordedSpacing | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly cursor: SourceCursor<T>;
  private readonly wakeup: Wakeup;
  private readonly ready = new ReadyHeap<T>();
  private readonly gate = new KeyGate<T>();
  private readonly multiGate = new MultiKeyGate<T>();
  private admitted = 0;
  private inFlight = 0;
  private lastAdmitted: T | undefined;
  private stopped = false;
  private failure: { error: unknown } | undefined;
  private pumping = false;
  private again = false;
  private finished = false;
  private settle: { resolve: (result: SchedulerResult<T>) => void; reject: (error: unknown) => void } | undefined;
  private readonly onAbort = (): void => this.stop();

  constructor(
    source: AsyncIterator<readonly T[]>,
    options: SchedulerOptions,
    private readonly handlers: SchedulerHandlers<T>,
  ) {
    this.clock = options.clock ?? systemClock;
    this.concurrency = Math.max(1, Math.floor(options.concurrency));
    this.maxBuffered = Math.max(1, options.maxBuffered ?? defaultMaxBuffered(this.concurrency));
    this.bucket = options.rate !== undefined ? new TokenBucket(options.rate, this.clock.now()) : undefined;
    this.spacing = options.speed !== undefined ? new RecordedSpacing(options.speed) : undefined;
    this.signal = options.signal;
    this.cursor = new SourceCursor(
      source,
      () => this.pump(),
      (error) => this.fail(error),
    );
    this.wakeup = new Wakeup(this.clock, () => this.pump());
  }

  /** Runs until the source is exhausted and every item finished, or the signal stopped it. */
  run(): Promise<SchedulerResult<T>> {
    const done = new Promise<SchedulerResult<T>>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    if (this.signal?.aborted) this.stop();
    else {
      this.signal?.addEventListener("abort", this.onAbort, { once: true });
      this.pump();
    }
    return done;
  }

  private pump(): void {
    // Re-entrant calls (a handler finishing synchronously) just ask for another pass.
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    do {
      this.again = false;
      const now = this.clock.now();
      this.admitFromSource(now);
      this.startReady(now);
    } while (this.again);
    this.pumping = false;
    this.finishWhenIdle();
  }

  /**
   * Admits from the source while there is room and the recorded spacing allows. Reading ahead
   * goes on only while fewer items are ready than could start at once: items waiting behind a
   * busy key fill the lookahead (up to maxBuffered), items that could start do not pile up.
   * An item waiting tens of milliseconds outlives V8's young generation, so a full lookahead
   * of ready items would be copied to the old one and held there until a full collection
   * (replay's peak RSS grew with the file for that reason).
   */
  private admitFromSource(now: number): void {
    while (!this.stopped && this.ready.length < this.concurrency && this.ready.length + this.blocked < this.maxBuffered) {
      const item = this.cursor.peek();
      if (item === undefined) return;
      if (this.spacing && item.time !== undefined) {
        const due = this.spacing.dueAt(item.time, now);
        if (due > now) return this.wakeup.request(due);
      }
      this.cursor.advance();
      this.admit(item);
    }
  }

  private admit(item: T): void {
    this.lastAdmitted = item;
    const seq = this.admitted++;
    if (item.orderKeys !== undefined) {
      if (this.multiGate.enter(item.orderKeys, seq, item)) this.ready.push(seq, item);
    } else if (item.orderKey === undefined || this.gate.enter(item.orderKey, seq, item)) this.ready.push(seq, item);
  }

  /** Admitted items waiting behind their key. */
  private get blocked(): number {
    return this.gate.blocked + this.multiGate.blocked;
  }

  private startReady(now: number): void {
    while (this.inFlight < this.concurrency && this.ready.length > 0 && !this.stopped) {
      const nextTokenAt = this.bucket?.take(now);
      if (nextTokenAt !== undefined) return this.wakeup.request(nextTokenAt);
      this.start(this.ready.shift() as T);
    }
  }

  private start(item: T): void {
    this.inFlight += 1;
    let promise: Promise<void>;
    try {
      promise = this.handlers.run(item);
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      () => this.finishItem(item),
      (error: unknown) => {
        this.fail(error);
        this.finishItem(item);
      },
    );
  }

  private finishItem(item: T): void {
    this.inFlight -= 1;
    if (item.orderKeys !== undefined) {
      for (const next of this.multiGate.leave(item.orderKeys, item)) this.ready.push(next.seq, next.item);
    } else if (item.orderKey !== undefined) {
      const next = this.gate.leave(item.orderKey);
      if (next !== undefined) this.ready.push(next.seq, next.item);
    }
    this.pump();
  }

  private fail(error: unknown): void {
    this.failure ??= { error };
    this.stop();
  }

  /** Stops admission and hands back what was admitted and not started. */
  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.wakeup.cancel();
    for (const item of this.ready.drain()) this.handlers.dropped(item);
    for (const item of this.gate.drain()) this.handlers.dropped(item);
    for (const item of this.multiGate.drain()) this.handlers.dropped(item);
    this.pump();
  }

  private finishWhenIdle(): void {
    const exhausted = this.stopped || this.cursor.exhausted;
    if (this.finished || !exhausted || this.inFlight > 0 || this.ready.length > 0 || this.blocked > 0 || this.cursor.reading) return;
    this.finished = true;
    this.wakeup.cancel();
    this.signal?.removeEventListener("abort", this.onAbort);
    if (this.stopped) this.cursor.close();
    if (this.failure) this.settle?.reject(this.failure.error);
    else this.settle?.resolve({ stopped: this.signal?.aborted === true, lastAdmitted: this.lastAdmitted });
  }
}
