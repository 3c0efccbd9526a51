import { systemClock, type Clock, type TimerHandle } from "../util/clock.js";

/**
 * The replay scheduler (pure logic on an injected clock): at most
 * `concurrency` messages in flight, starts limited to `rate` per second (token
 * bucket), admission following the recorded spacing sped up `speed` times, and
 * one message at a time per order key, in file order. Buffering is bounded by
 * `maxBuffered`, so memory stays constant however long the input is.
 */

export interface PacedItem {
  /** Items with the same key run one at a time, in source order. */
  orderKey: string | undefined;
  /** Recorded epoch ms, for `speed`. */
  time: number | undefined;
}

export interface PacingOptions {
  concurrency: number;
  /** Starts per second. */
  rate?: number;
  /** Keep the recorded spacing, this many times faster. */
  speed?: number;
  /** Admitted items waiting to start (per-key queues included). */
  maxBuffered?: number;
  clock?: Clock;
  /** Stops admission; admitted items not yet started are handed to `dropped`. */
  signal?: AbortSignal;
}

export interface PacingHandlers<T> {
  /** Runs one item. Must resolve (not reject) once the item is finished. */
  run(item: T): Promise<void>;
  /** An admitted item that never started because the signal stopped the run. */
  dropped(item: T): void;
}

export interface PacingResult<T> {
  /** True when the signal stopped the run before the source was exhausted. */
  stopped: boolean;
  /** The last item taken from the source (started, or dropped on stop). */
  lastAdmitted: T | undefined;
}

export function defaultMaxBuffered(concurrency: number): number {
  // Enough lookahead for other users to go on while some wait; small enough
  // that an interruption has little admitted-but-unstarted work to hand back.
  return Math.max(256, concurrency * 8);
}

/** A FIFO without Array#shift's O(n) copies. */
class Queue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  drain(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return rest;
  }
}

/**
 * Items ready to start, oldest (by admission) first: an item released by its
 * key's previous one goes before later items of other keys, so file order is
 * kept wherever the per-key rule allows (exactly, at concurrency 1). Parallel
 * arrays, so pushing and shifting allocate nothing per item.
 */
class ReadyHeap<T> {
  private readonly seqs: number[] = [];
  private readonly items: T[] = [];

  get length(): number {
    return this.items.length;
  }

  push(seq: number, item: T): void {
    const seqs = this.seqs;
    const items = this.items;
    let i = items.length;
    seqs.push(seq);
    items.push(item);
    // Admitted items come in increasing order, so this usually stops at once.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const parentSeq = seqs[parent] as number;
      if (parentSeq <= seq) break;
      seqs[i] = parentSeq;
      items[i] = items[parent] as T;
      i = parent;
    }
    seqs[i] = seq;
    items[i] = item;
  }

  shift(): T | undefined {
    const seqs = this.seqs;
    const items = this.items;
    if (items.length === 0) return undefined;
    const top = items[0] as T;
    const lastSeq = seqs.pop() as number;
    const last = items.pop() as T;
    const n = items.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const child = right < n && (seqs[right] as number) < (seqs[left] as number) ? right : left;
        const childSeq = seqs[child] as number;
        if (childSeq >= lastSeq) break;
        seqs[i] = childSeq;
        items[i] = items[child] as T;
        i = child;
      }
      seqs[i] = lastSeq;
      items[i] = last;
    }
    return top;
  }

  drain(): T[] {
    const rest: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) rest.push(item);
    return rest;
  }
}

export function pace<T extends PacedItem>(source: AsyncIterator<T[]>, options: PacingOptions, handlers: PacingHandlers<T>): Promise<PacingResult<T>> {
  const clock = options.clock ?? systemClock;
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  const maxBuffered = Math.max(1, options.maxBuffered ?? defaultMaxBuffered(concurrency));
  const rate = options.rate;
  const speed = options.speed;
  const signal = options.signal;
  // A burst of about 20 ms of the rate (at least 2) keeps late timers and their
  // granularity from lowering the rate; the bucket starts with one token, so no initial burst.
  const bucketSize = rate !== undefined ? Math.max(2, rate / 50) : 0;
  let tokens = rate !== undefined ? 1 : 0;
  let tokensAt = clock.now();

  let batch: T[] = [];
  let batchIndex = 0;
  let sourceDone = false;
  let reading = false;
  let stopped = false;
  let failure: { error: unknown } | undefined;
  let lastAdmitted: T | undefined;

  const ready = new ReadyHeap<T>();
  let admitted = 0;
  // Keys with an item in flight or ready; their later items wait here, with their admission number.
  // null: busy with none waiting (most keys, most of the time), so no queue is made for them.
  const busy = new Map<string, Queue<{ seq: number; item: T }> | null>();
  let blocked = 0;
  let inFlight = 0;

  let firstTime: number | undefined;
  let firstWall = 0;
  let timer: TimerHandle | undefined;
  let timerAt = Infinity;
  let pumping = false;
  let again = false;

  let resolveDone!: (result: PacingResult<T>) => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<PacingResult<T>>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  let finished = false;

  const wakeAt = (at: number): void => {
    if (timer !== undefined && timerAt <= at) return;
    if (timer !== undefined) clock.clearTimeout(timer);
    timerAt = at;
    timer = clock.setTimeout(() => {
      timer = undefined;
      timerAt = Infinity;
      pump();
    }, Math.max(1, Math.ceil(at - clock.now())));
  };

  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    if (timer !== undefined) clock.clearTimeout(timer);
    timer = undefined;
    for (const item of ready.drain()) handlers.dropped(item);
    for (const queue of busy.values()) for (const waiting of queue?.drain() ?? []) handlers.dropped(waiting.item);
    busy.clear();
    blocked = 0;
    pump();
  };
  const onAbort = (): void => stop();
  signal?.addEventListener("abort", onAbort, { once: true });

  const read = (): void => {
    reading = true;
    source.next().then(
      (next) => {
        reading = false;
        if (next.done) sourceDone = true;
        else {
          batch = next.value;
          batchIndex = 0;
        }
        pump();
      },
      (error: unknown) => {
        reading = false;
        sourceDone = true;
        failure ??= { error };
        stop();
      },
    );
  };

  const admit = (item: T): void => {
    lastAdmitted = item;
    const seq = admitted++;
    const key = item.orderKey;
    if (key === undefined) {
      ready.push(seq, item);
      return;
    }
    let queue = busy.get(key);
    if (queue === undefined) {
      busy.set(key, null);
      ready.push(seq, item);
    } else {
      if (queue === null) {
        queue = new Queue();
        busy.set(key, queue);
      }
      queue.push({ seq, item });
      blocked += 1;
    }
  };

  const finish = (item: T): void => {
    inFlight -= 1;
    const key = item.orderKey;
    if (key !== undefined) {
      const queue = busy.get(key);
      const next = queue?.shift();
      if (next !== undefined) {
        blocked -= 1;
        ready.push(next.seq, next.item);
      } else busy.delete(key);
    }
    pump();
  };

  const start = (item: T): void => {
    inFlight += 1;
    let promise: Promise<void>;
    try {
      promise = handlers.run(item);
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      () => finish(item),
      (error: unknown) => {
        failure ??= { error };
        stop();
        finish(item);
      },
    );
  };

  const takeToken = (now: number): boolean => {
    if (rate === undefined) return true;
    tokens = Math.min(bucketSize, tokens + ((now - tokensAt) * rate) / 1000);
    tokensAt = now;
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    wakeAt(now + ((1 - tokens) * 1000) / rate);
    return false;
  };

  function pump(): void {
    // Re-entrant calls (a handler finishing synchronously) just ask for another pass.
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    do {
      again = false;
      const now = clock.now();
      // Admit from the source while there is room and the recorded spacing allows.
      while (!stopped && ready.length + blocked < maxBuffered) {
        if (batchIndex >= batch.length) {
          if (!sourceDone && !reading) read();
          break;
        }
        const item = batch[batchIndex] as T;
        if (speed !== undefined && item.time !== undefined) {
          if (firstTime === undefined) {
            firstTime = item.time;
            firstWall = now;
          }
          const due = firstWall + (item.time - firstTime) / speed;
          if (due > now) {
            wakeAt(due);
            break;
          }
        }
        batch[batchIndex] = undefined as unknown as T;
        batchIndex += 1;
        admit(item);
      }
      // Start what may start.
      while (inFlight < concurrency && ready.length > 0 && !stopped) {
        if (!takeToken(now)) break;
        start(ready.shift() as T);
      }
    } while (again);
    pumping = false;

    const exhausted = stopped || (sourceDone && batchIndex >= batch.length);
    if (!finished && exhausted && inFlight === 0 && ready.length === 0 && blocked === 0 && !reading) {
      finished = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (stopped && !sourceDone) void source.return?.();
      if (failure) rejectDone(failure.error);
      else resolveDone({ stopped: signal?.aborted === true, lastAdmitted });
    }
  }

  if (signal?.aborted) stop();
  else pump();
  return done;
}
