import type { Clock, TimerHandle } from "../util/clock.js";
import type { ReceivedWebhook } from "./types.js";

/** How a wait ended without its matches: its timeout passed, or the receiver closed. */
export type WaitEnding = "timeout" | "closed";

/** One waitFor in progress: its test, what matched so far, and how it ends. */
interface Waiter {
  test: (request: ReceivedWebhook) => boolean;
  count: number;
  found: ReceivedWebhook[];
  timer: TimerHandle;
  /** The rejection's error: why it ended and what it had found. */
  failure(ending: WaitEnding, found: readonly ReceivedWebhook[]): Error;
  resolve(found: ReceivedWebhook[]): void;
  reject(error: Error): void;
}

/**
 * The library receiver's waitFor: each request is offered to every waiter as it arrives, before
 * the history's bounds can drop it, so a burst that trims the history cannot hide a match. A waiter
 * holds its matches only until it has `count` of them.
 */
export class Waiters {
  private readonly waiting = new Set<Waiter>();

  constructor(private readonly clock: Clock) {}

  /** Waits for `count` requests passing `test`, `found` (from the history) counted first; `failure` makes the rejection. */
  wait(found: ReceivedWebhook[], test: Waiter["test"], count: number, timeoutMs: number, failure: Waiter["failure"]): Promise<ReceivedWebhook[]> {
    if (found.length >= count) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        test,
        count,
        found,
        failure,
        resolve,
        reject,
        timer: this.clock.setTimeout(() => this.end(waiter, failure("timeout", waiter.found)), timeoutMs),
      };
      this.waiting.add(waiter);
    });
  }

  /** A request has arrived. */
  offer(request: ReceivedWebhook): void {
    for (const waiter of this.waiting) {
      let matched: boolean;
      try {
        matched = waiter.test(request);
      } catch (error) {
        this.end(waiter, error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (!matched) continue;
      waiter.found.push(request);
      if (waiter.found.length >= waiter.count) this.end(waiter, waiter.found);
    }
  }

  /** Every waiter still waiting rejects: the receiver closed. */
  rejectAll(): void {
    for (const waiter of this.waiting) this.end(waiter, waiter.failure("closed", waiter.found));
  }

  private end(waiter: Waiter, outcome: ReceivedWebhook[] | Error): void {
    if (!this.waiting.delete(waiter)) return;
    this.clock.clearTimeout(waiter.timer);
    if (outcome instanceof Error) waiter.reject(outcome);
    else waiter.resolve(outcome);
  }
}
