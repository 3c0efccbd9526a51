import type { Clock, TimerHandle } from "../util/clock.js";

/** When the scheduler may start the next item: the rate's token bucket, the recorded spacing, and the wake-up that waits for either. */

/** Starts per second as a token bucket. */
export class TokenBucket {
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
export class RecordedSpacing {
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

/** One pending wake-up on the clock, moved earlier when asked. */
export class Wakeup {
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
