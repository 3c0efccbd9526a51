import type { Clock, TimerHandle } from "../util/clock.js";

/**
 * Whether deliveries to each webhook URL are failing, told as changes (docs/serve-api.md#output):
 * `failing` when attempts to a URL start failing, `recovered` at its first success after that.
 * Rate-limited per URL: a `failing` comes at most once per `quietMs`; a URL that fails again
 * sooner is told only if it is still failing when that time is up (a blip in between is not told),
 * so a URL tells at most two changes per `quietMs`, however many messages or attempts it fails.
 * Pure but for the clock. It holds one entry per URL that has failed: serve's webhook URLs (5 at most).
 */
export type TargetChange = { state: "failing"; url: string; error: string } | { state: "recovered"; url: string; failedAttempts: number; downMs: number };

/** A `failing` change per URL at most this often. */
export const QUIET_MS = 30_000;

interface UrlState {
  told: "ok" | "failing";
  /** When `failing` was last told. */
  failingToldAt: number | undefined;
  /** The failed attempts in a row (the URL is failing while there are any), when the first of them ended, and the last one's error. */
  failed: number;
  failingSince: number;
  error: string;
  /** A later look, while `failing` may not be told yet. */
  timer: TimerHandle | undefined;
}

export class TargetHealth {
  private readonly urls = new Map<string, UrlState>();
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly tell: (change: TargetChange) => void,
    private readonly quietMs = QUIET_MS,
  ) {}

  /** One attempt to `url` ended: `error` null for a 2xx. */
  attempt(url: string, error: string | null): void {
    if (this.closed) return;
    let state = this.urls.get(url);
    // A URL that only ever succeeds costs nothing.
    if (state === undefined && error === null) return;
    state ??= { told: "ok", failingToldAt: undefined, failed: 0, failingSince: 0, error: "", timer: undefined };
    this.urls.set(url, state);
    if (error === null) return this.succeeded(url, state);
    if (state.failed === 0) state.failingSince = this.clock.now();
    state.failed += 1;
    state.error = error;
    this.tellFailing(url, state);
  }

  /** No more changes are told (serve is stopping: the attempts it cuts are not the URL failing). */
  close(): void {
    this.closed = true;
    for (const state of this.urls.values()) if (state.timer) this.clock.clearTimeout(state.timer);
  }

  private succeeded(url: string, state: UrlState): void {
    if (state.told === "failing") {
      this.tell({ state: "recovered", url, failedAttempts: state.failed, downMs: this.clock.now() - state.failingSince });
      state.told = "ok";
    }
    state.failed = 0;
  }

  /** Tells `failing` now, or when the quiet time since the last one is up if the URL is failing then. */
  private tellFailing(url: string, state: UrlState): void {
    if (state.told === "failing" || state.timer !== undefined) return;
    const wait = state.failingToldAt === undefined ? 0 : state.failingToldAt + this.quietMs - this.clock.now();
    if (wait > 0) {
      state.timer = this.clock.setTimeout(() => {
        state.timer = undefined;
        if (!this.closed && state.failed > 0) this.tellFailing(url, state);
      }, wait);
      return;
    }
    this.tell({ state: "failing", url, error: state.error });
    state.told = "failing";
    state.failingToldAt = this.clock.now();
  }
}
