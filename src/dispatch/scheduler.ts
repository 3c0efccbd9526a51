import { systemClock, type Clock, type TimerHandle } from "../util/clock.js";
import { Queue, ReadyHeap } from "./heap.js";

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

/** Starts per second as a token bucket. */
class TokenBucket {
  // A burst of about 20 ms of the rate (at least 2) keeps late timers and their granularity
  // from lowering the rate; the bucket starts with one token, so no initial burst.
  private readonly size: number;
  private tokens = 1;

  constructor(
    private readonly rate: number,
    private at: number,
  ) {
    this.size = Math.max(2, rate / 50);
  }

  /** Takes a token and returns undefined, or returns when the next token is due. */
  take(now: number): number | undefined {
    this.tokens = Math.min(this.size, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return undefined;
    }
    return now + ((1 - this.tokens) * 1000) / this.rate;
  }
}

/** The recorded spacing, `speed` times faster, anchored at the first timed item. */
class RecordedSpacing {
  private firstTime: number | undefined;
  private firstWall = 0;

  constructor(private readonly speed: number) {}

  dueAt(time: number, now: number): number {
    if (this.firstTime === undefined) {
      this.firstTime = time;
      this.firstWall = now;
    }
    return this.firstWall + (time - this.firstTime) / this.speed;
  }
}

interface Waiting<T> {
  seq: number;
  item: T;
}

/** One item at a time per key: later items of a busy key wait here with their admission number. */
class KeyGate<T> {
  // null: busy with none waiting (most keys, most of the time), so no queue is made for them.
  private readonly busy = new Map<string, Queue<Waiting<T>> | null>();
  blocked = 0;

  /** True when the item may be ready now; false when it waits behind its key. */
  enter(key: string, seq: number, item: T): boolean {
    let queue = this.busy.get(key);
    if (queue === undefined) {
      this.busy.set(key, null);
      return true;
    }
    if (queue === null) {
      queue = new Queue();
      this.busy.set(key, queue);
    }
    queue.push({ seq, item });
    this.blocked += 1;
    return false;
  }

  /** The key's item finished: its next waiting item, or undefined (the key is free). */
  leave(key: string): Waiting<T> | undefined {
    const next = this.busy.get(key)?.shift();
    if (next === undefined) this.busy.delete(key);
    else this.blocked -= 1;
    return next;
  }

  drain(): T[] {
    const rest: T[] = [];
    for (const queue of this.busy.values()) for (const waiting of queue?.drain() ?? []) rest.push(waiting.item);
    this.busy.clear();
    this.blocked = 0;
    return rest;
  }
}

/** The source read a batch at a time, with at most one read in flight. */
class SourceCursor<T> {
  private batch: readonly T[] = [];
  private index = 0;
  done = false;
  reading = false;

  constructor(
    private readonly source: AsyncIterator<readonly T[]>,
    private readonly onRead: () => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The next item, or undefined while the next batch is being read (or none is left). */
  peek(): T | undefined {
    if (this.index < this.batch.length) return this.batch[this.index];
    if (!this.done && !this.reading) this.read();
    return undefined;
  }

  advance(): void {
    this.index += 1;
  }

  get exhausted(): boolean {
    return this.done && this.index >= this.batch.length;
  }

  close(): void {
    if (!this.done) void this.source.return?.();
  }

  private read(): void {
    this.reading = true;
    this.source.next().then(
      (next) => {
        this.reading = false;
        if (next.done) this.done = true;
        else {
          this.batch = next.value;
          this.index = 0;
        }
        this.onRead();
      },
      (error: unknown) => {
        this.reading = false;
        this.done = true;
        this.onError(error);
      },
    );
  }
}

/** One pending wake-up on the clock, moved earlier when asked. */
class Wakeup {
  private timer: TimerHandle | undefined;
  private at = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly callback: () => void,
  ) {}

  request(at: number): void {
    if (this.timer !== undefined && this.at <= at) return;
    this.cancel();
    this.at = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.at = Infinity;
        this.callback();
      },
      Math.max(1, Math.ceil(at - this.clock.now())),
    );
  }

  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.at = Infinity;
  }
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
    this.cursor = new SourceCursor(source, () => this.pump(), (error) => this.fail(error));
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
    while (!this.stopped && this.ready.length < this.concurrency && this.ready.length + this.gate.blocked < this.maxBuffered) {
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
    if (item.orderKey === undefined || this.gate.enter(item.orderKey, seq, item)) this.ready.push(seq, item);
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
    if (item.orderKey !== undefined) {
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
    this.pump();
  }

  private finishWhenIdle(): void {
    const exhausted = this.stopped || this.cursor.exhausted;
    if (this.finished || !exhausted || this.inFlight > 0 || this.ready.length > 0 || this.gate.blocked > 0 || this.cursor.reading) return;
    this.finished = true;
    this.wakeup.cancel();
    this.signal?.removeEventListener("abort", this.onAbort);
    if (this.stopped) this.cursor.close();
    if (this.failure) this.settle?.reject(this.failure.error);
    else this.settle?.resolve({ stopped: this.signal?.aborted === true, lastAdmitted: this.lastAdmitted });
  }
}
