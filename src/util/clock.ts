/**
 * Time as a dependency: retry schedules and batching take a Clock so tests run
 * them in virtual time instead of waiting.
 */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export type Random = () => number;

/** Real time. `keepAlive`: whether a pending timer holds the process open, as Node's own do. */
export function realClock(options: { keepAlive: boolean }): Clock {
  let next = 1;
  const timers = new Map<number, NodeJS.Timeout>();
  return {
    now: () => Date.now(),
    setTimeout(callback, ms) {
      const id = next++;
      const timer = setTimeout(() => {
        timers.delete(id);
        callback();
      }, ms);
      if (!options.keepAlive) timer.unref();
      timers.set(id, timer);
      return { id };
    },
    clearTimeout(handle) {
      const timer = timers.get(handle.id);
      if (timer) {
        clearTimeout(timer);
        timers.delete(handle.id);
      }
    },
  };
}

// A pending retry or flush timer alone must not keep a process alive.
export const systemClock: Clock = realClock({ keepAlive: false });

/** Resolves after `ms` on `clock`, or rejects with the signal's reason when aborted first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

interface VirtualTimer {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * A clock that only moves when told. `advance(ms)` fires due timers in order,
 * letting promise callbacks settle between them. With `autoAdvance`, any timer
 * set fires as soon as nothing else is pending, jumping time forward: handy for
 * running a whole retry schedule against a real server in milliseconds.
 */
export class VirtualClock implements Clock {
  private time: number;
  private nextId = 1;
  private timers: VirtualTimer[] = [];
  private readonly autoAdvance: boolean;
  private pumping = false;

  constructor(start = 0, options: { autoAdvance?: boolean } = {}) {
    this.time = start;
    this.autoAdvance = options.autoAdvance ?? false;
  }

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.time + Math.max(0, ms), callback };
    this.timers.push(timer);
    this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
    if (this.autoAdvance) this.schedulePump();
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  /** Number of timers waiting. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    for (;;) {
      await settle();
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.time = Math.max(this.time, next.at);
      next.callback();
    }
    this.time = target;
    await settle();
  }

  /** Fires timers until none are left (or `limit` have fired). */
  async runAll(limit = 10_000): Promise<void> {
    for (let fired = 0; fired < limit; fired++) {
      await settle();
      const next = this.timers.shift();
      if (!next) return;
      this.time = Math.max(this.time, next.at);
      next.callback();
    }
  }

  private schedulePump(): void {
    if (this.pumping) return;
    this.pumping = true;
    // setImmediate lets pending I/O and promise chains run first, so only a
    // timer nobody is racing against gets fired early.
    setImmediate(() => {
      this.pumping = false;
      const next = this.timers.shift();
      if (!next) return;
      this.time = Math.max(this.time, next.at);
      next.callback();
      if (this.timers.length > 0) this.schedulePump();
    });
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Small, fast, seedable PRNG (mulberry32) for reproducible jitter, examples and fault rates. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
