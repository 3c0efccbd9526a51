import { systemClock, type Clock, type TimerHandle } from "../util/clock.js";

/**
 * How serve takes a burst without resetting anyone: at most `limit` requests
 * are read and handled at once; the rest wait their turn, in arrival order,
 * unread (a waiting request holds its socket and headers, not its body).
 * No one waits longer than `maxWaitMs`: the clients time out at 10 s
 * (analytics-node) or 15 s (analytics-python) and would send the same events
 * again, so past that wait the request is turned away (503 with Retry-After),
 * which every client retries. The waiting list is bounded by `maxWaiting`.
 */

/** Requests handled at once; a burst past it waits. */
export const DEFAULT_REQUESTS_AT_ONCE = 256;
/** The longest a request waits for its turn before a 503 with Retry-After. */
export const MAX_WAIT_MS = 5_000;

export interface Ticket {
  /** The request is done (answered or its connection gone): the next one may go. Idempotent. */
  leave(): void;
}

interface Waiting {
  admit: (ticket: Ticket) => void;
  refuse: () => void;
  timer: TimerHandle;
  gone: boolean;
}

export class Admission {
  private inProgress = 0;
  private readonly waiting: Waiting[] = [];
  private head = 0;
  /** Entries in `waiting` still waiting (not admitted, refused or withdrawn). */
  private live = 0;

  constructor(
    private readonly limit: number = DEFAULT_REQUESTS_AT_ONCE,
    private readonly maxWaitMs: number = MAX_WAIT_MS,
    private readonly maxWaiting: number = 64 * DEFAULT_REQUESTS_AT_ONCE,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Admits a request now or later (`admit`), or refuses it (`refuse`: the wait
   * would pass `maxWaitMs`, or the waiting list is full). Returns a function
   * that withdraws a request still waiting (its connection closed).
   */
  enter(admit: (ticket: Ticket) => void, refuse: () => void): () => void {
    // Below the limit no one is left waiting: every leave() admits the next ones.
    if (this.inProgress < this.limit) {
      admit(this.ticket());
      return () => {};
    }
    if (this.live >= this.maxWaiting) {
      refuse();
      return () => {};
    }
    const entry: Waiting = {
      admit,
      refuse,
      gone: false,
      timer: this.clock.setTimeout(() => {
        this.pass(entry);
        refuse();
      }, this.maxWaitMs),
    };
    this.waiting.push(entry);
    this.live += 1;
    return () => {
      if (entry.gone) return;
      this.pass(entry);
      this.clock.clearTimeout(entry.timer);
    };
  }

  /** Requests being handled, and waiting. */
  get load(): { inProgress: number; waiting: number } {
    return { inProgress: this.inProgress, waiting: this.live };
  }

  private pass(entry: Waiting): void {
    entry.gone = true;
    this.live -= 1;
    // Entries that left from the front are dropped at once, so the list holds little more than those waiting.
    while (this.head < this.waiting.length && (this.waiting[this.head] as Waiting).gone) this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
  }

  private ticket(): Ticket {
    this.inProgress += 1;
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.inProgress -= 1;
        this.next();
      },
    };
  }

  private next(): void {
    while (this.inProgress < this.limit && this.head < this.waiting.length) {
      const entry = this.waiting[this.head] as Waiting;
      if (entry.gone) {
        this.head += 1;
        continue;
      }
      this.pass(entry);
      this.clock.clearTimeout(entry.timer);
      entry.admit(this.ticket());
    }
  }
}
