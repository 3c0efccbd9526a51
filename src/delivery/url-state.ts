import type { Target } from "../config/destination.js";
import type { InvocationRecord } from "../functions/types.js";
import type { CapturedResponse } from "./captured-body.js";
import type { NextRound } from "./policy.js";
import type { AttemptReport } from "./transport.js";
import type { AttemptEvent, DeliveryResult, PreparedRequest, UrlResult } from "./types.js";

/** One URL's attempts for one delivery (a message, or a Webhooks (Actions) request). */
export class UrlState {
  attempts = 0;
  status: number | null = null;
  error: string | null = null;
  ms = 0;
  response: CapturedResponse | undefined;
  invocation: InvocationRecord | undefined;
  skipped: string | undefined;

  constructor(
    readonly target: Target,
    /** What the next attempt sends: signed again before each retry when the scheme signs a timestamp (`renew`). */
    public request: PreparedRequest,
    /** The request signed afresh at `now` (ms), keeping the message's id: a timestamped scheme's retry. */
    private readonly renew?: (now: number) => PreparedRequest,
  ) {}

  /** Before a retry: a timestamped scheme's request is signed again with the clock now (docs/schemes.md#timestamps). */
  renewAt(now: number): void {
    if (this.renew) this.request = this.renew(now);
  }

  record(report: AttemptReport): void {
    this.attempts += 1;
    this.status = report.status;
    this.error = report.error;
    this.ms += report.ms;
    this.response = report.captured;
    // Set only where a function answered: an HTTP attempt pays one check each.
    if (report.invocation !== undefined || this.invocation !== undefined) {
      this.invocation = report.invocation;
      this.skipped = report.outcome.kind === "skipped" ? report.outcome.reason : undefined;
    }
  }

  result(): UrlResult {
    const result: UrlResult = { url: this.target.url, status: this.status, attempts: this.attempts, error: this.error, ms: this.ms };
    if (this.response !== undefined) result.response = this.response;
    if (this.invocation !== undefined) result.invocation = this.invocation;
    if (this.skipped !== undefined) result.skipped = this.skipped;
    return result;
  }
}

/** The result of a URL that was never tried: its event is refused before anything is sent. */
export function refusedResult(target: Target, reason: string): UrlResult {
  return { url: target.url, status: null, attempts: 0, error: reason, ms: 0 };
}

/** Tells the caller of each attempt of a round. */
export function emitAttempts(
  onAttempt: (event: AttemptEvent) => void,
  pending: readonly UrlState[],
  reports: readonly AttemptReport[],
  retryInMs: number | undefined,
  retried: readonly UrlState[],
): void {
  pending.forEach((state, i) => {
    const report = reports[i] as AttemptReport;
    const retry = retryInMs !== undefined && retried.includes(state) ? retryInMs : undefined;
    tellAttempt(onAttempt, attemptEvent(state.target.url, state.attempts, report, report.error, state.request, retry));
  });
}

/** One attempt as its caller is told of it: `report`, with `error` as the round words it; `retryInMs` when it goes again. */
export function attemptEvent(
  url: string,
  attempt: number,
  report: AttemptReport,
  error: string | null,
  request: PreparedRequest,
  retryInMs: number | undefined,
): AttemptEvent {
  const event: AttemptEvent = { url, attempt, outcome: report.outcome, status: report.status, error, ms: report.ms, request };
  // Set rather than spread: one event per attempt of every message.
  if (retryInMs !== undefined) event.retryInMs = retryInMs;
  if (report.response) event.response = report.response;
  if (report.invocation) event.invocation = report.invocation;
  return event;
}

export function tellAttempt(onAttempt: (event: AttemptEvent) => void, event: AttemptEvent): void {
  try {
    onAttempt(event);
  } catch {
    // A faulty listener must not break delivery.
  }
}

/** A delivery's result: its outcome, and each URL's as it stands; skipped when every target is a function that skipped it. */
export function resultOf(states: readonly UrlState[], delivered: boolean, rounds: number, interrupted: boolean): DeliveryResult {
  const result: DeliveryResult = { delivered, rounds, interrupted, urls: states.map((state) => state.result()) };
  if (!delivered && !interrupted && states.length > 0 && states.every((state) => state.skipped !== undefined)) result.skipped = true;
  return result;
}

/** The end of a delivery: delivered or not; URLs stopped by the window say so. */
export function finish(plan: Extract<NextRound, { retry: false }>, retryable: readonly UrlState[]): boolean {
  if (plan.reason === "window") for (const state of retryable) state.error = `${state.error ?? "failed"}; retry window closed`;
  return plan.reason === "delivered";
}
