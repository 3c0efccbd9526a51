import type { Target } from "../config/destination.js";
import { sign, signingKey, type SecretKey } from "../signing.js";
import { sleep, systemClock, type Clock, type Random } from "../util/clock.js";
import { holdProcess } from "../util/keep-alive.js";
import { classifyOutcome, planNextRound, type NextRound } from "./policy.js";
import type { CapturedResponse } from "./captured-body.js";
import type { AttemptReport, DeliveryTransport } from "./transport.js";
import {
  DEFAULT_RETRY_WINDOW_MS,
  DEFAULT_TIMEOUT_MS,
  type AttemptEvent,
  type DeliverCall,
  type DeliveryResult,
  type PreparedRequest,
  type UrlResult,
} from "./types.js";

/** How the engine delivers: its deadline, retry window, clock, randomness and network. */
export interface DeliveryOptions {
  /** Deadline per attempt for the response status, connect and TLS included. Default 5 s. */
  timeoutMs?: number;
  /** No attempt starts later than this after the first one. Default 4 h. */
  retryWindowMs?: number;
  clock?: Clock;
  random?: Random;
  /** The network: the undici adapter in production, a fake in unit tests. The engine closes it. */
  transport: DeliveryTransport;
}

export interface EngineSettings {
  targets: Target[];
  secret: string | undefined;
  userAgent: string;
}

/** One URL's attempts for one message. */
class UrlState {
  attempts = 0;
  status: number | null = null;
  error: string | null = null;
  ms = 0;
  response: CapturedResponse | undefined;

  constructor(
    readonly target: Target,
    readonly request: PreparedRequest,
  ) {}

  record(report: AttemptReport): void {
    this.attempts += 1;
    this.status = report.status;
    this.error = report.error;
    this.ms += report.ms;
    this.response = report.captured;
  }

  result(): UrlResult {
    const result: UrlResult = { url: this.target.url, status: this.status, attempts: this.attempts, error: this.error, ms: this.ms };
    if (this.response !== undefined) result.response = this.response;
    return result;
  }
}

/**
 * THE delivery engine (docs/delivery.md#the-forwarded-request, docs/delivery.md#retry-schedule): signs the exact bytes, POSTs them
 * to every target at once through its transport, retries the retryable ones
 * together on the policy's schedule, and reports; delivery failures are
 * results, never rejections.
 */
export class DeliveryEngine {
  private readonly settings: EngineSettings;
  private readonly timeoutMs: number;
  private readonly retryWindowMs: number;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly transport: DeliveryTransport;
  // Made once (signingKey): converting the text per message costs more than the hash.
  private readonly key: SecretKey | undefined;

  constructor(settings: EngineSettings, options: DeliveryOptions) {
    this.settings = { targets: [...settings.targets], secret: settings.secret, userAgent: settings.userAgent };
    this.key = settings.secret === undefined ? undefined : signingKey(settings.secret);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retryWindowMs = options.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.transport = options.transport;
  }

  /** The exact request sent to `target` (docs/delivery.md#the-forwarded-request); --dry-run prints it. */
  prepare(body: string | Uint8Array, target: Target): PreparedRequest {
    const bytes = toBuffer(body);
    return this.prepareBytes(bytes, target, this.key === undefined ? undefined : sign(this.key, bytes));
  }

  /** Delivers one message to every target; resolves with the result (never rejects for delivery failures). */
  async deliver(body: string | Uint8Array, call: DeliverCall = {}): Promise<DeliveryResult> {
    const bytes = toBuffer(body);
    // Same bytes and secret for every target: sign once.
    const span = call.signedSpan;
    const signature = this.key === undefined ? undefined : sign(this.key, span ? bytes.subarray(span.start, span.end) : bytes);
    const states = (call.targets ?? this.settings.targets).map((target) => new UrlState(target, this.prepareBytes(bytes, target, signature)));
    const result = (delivered: boolean, rounds: number, interrupted: boolean): DeliveryResult => ({
      delivered,
      rounds,
      interrupted,
      urls: states.map((state) => state.result()),
    });
    if (states.length === 0) return result(false, 0, false);
    if (call.signal?.aborted) return result(false, 0, true);

    const firstAttemptAt = call.firstAttemptAt ?? this.clock.now();
    const cut = call.cutAttempts === true ? call.signal : undefined;
    let pending: readonly UrlState[] = states;
    for (let round = 1; ; round++) {
      const reports = cut
        ? await this.attemptAllUnlessCut(pending, call.keepResponse === true, call.captureResponse === true, cut)
        : await this.attemptAll(pending, call.keepResponse === true, call.captureResponse === true);
      // Cut short by the stop: nothing is known of this round, so the message is neither delivered nor failed.
      if (reports === undefined) return result(false, round, true);
      const plan = planNextRound({
        round,
        outcomes: reports.map((r) => r.outcome),
        now: this.clock.now(),
        firstAttemptAt,
        windowMs: this.retryWindowMs,
        random: this.random,
      });
      // Delivered (the usual case) needs no list of the URLs to retry.
      const retryable =
        plan.retry || plan.reason === "window" ? pending.filter((_, i) => classifyOutcome((reports[i] as AttemptReport).outcome) === "retry") : NONE;
      const stopping = plan.retry && call.signal?.aborted === true;
      if (call.onAttempt) emit(call.onAttempt, pending, reports, plan.retry && !stopping ? plan.waitMs : undefined, retryable);

      if (!plan.retry) return result(finish(plan, retryable), round, false);
      if (stopping || !(await this.wait(plan.waitMs, call.signal))) return result(false, round, true);
      pending = retryable;
    }
  }

  /** Closes the transport (keep-alive connections); waits for requests in flight. */
  async close(): Promise<void> {
    await this.transport.close();
  }

  /** One round: every pending URL at once, each report recorded on its URL. */
  private async attemptAll(pending: readonly UrlState[], keepResponse: boolean, capture: boolean): Promise<AttemptReport[]> {
    // One URL (the usual case) needs no Promise.all around its single attempt.
    const reports =
      pending.length === 1
        ? [await this.transport.post((pending[0] as UrlState).request, this.timeoutMs, keepResponse, capture)]
        : await Promise.all(pending.map((state) => this.transport.post(state.request, this.timeoutMs, keepResponse, capture)));
    for (const [i, state] of pending.entries()) state.record(reports[i] as AttemptReport);
    return reports;
  }

  /**
   * attemptAll, cut short when `cut` aborts: the attempts in flight are aborted, and the round
   * yields nothing (undefined) unless every answer was in first.
   */
  private async attemptAllUnlessCut(
    pending: readonly UrlState[],
    keepResponse: boolean,
    capture: boolean,
    cut: AbortSignal,
  ): Promise<AttemptReport[] | undefined> {
    if (cut.aborted) return undefined;
    const posts = Promise.all(pending.map((state) => this.transport.post(state.request, this.timeoutMs, keepResponse, capture, cut)));
    let onCut = (): void => {};
    const stopped = new Promise<undefined>((resolve) => {
      onCut = () => resolve(undefined);
      cut.addEventListener("abort", onCut, { once: true });
    });
    const reports = await Promise.race([posts, stopped]);
    cut.removeEventListener("abort", onCut);
    // An answer that came in as the stop did may be the transport's report of the cut itself.
    if (reports === undefined || cut.aborted) return undefined;
    for (const [i, state] of pending.entries()) state.record(reports[i] as AttemptReport);
    return reports;
  }

  /** Waits before the next round; false when the signal stopped the wait. */
  private async wait(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
    // The clock's timers are unref'd; a caller awaiting this delivery must not see its process exit mid-wait.
    const release = holdProcess();
    try {
      await sleep(this.clock, ms, signal);
      return true;
    } catch {
      return false;
    } finally {
      release();
    }
  }

  private prepareBytes(bytes: Buffer, target: Target, signature: string | undefined): PreparedRequest {
    const headers: Record<string, string> = { "User-Agent": this.settings.userAgent, "Content-Type": "application/json" };
    if (signature !== undefined) headers["X-Signature"] = signature;
    for (const [name, value] of Object.entries(target.headers)) {
      // A static User-Agent replaces ours rather than sending two.
      if (name.toLowerCase() === "user-agent") delete headers["User-Agent"];
      headers[name] = value;
    }
    return { url: target.url, method: "POST", headers, body: bytes };
  }
}

const NONE: readonly UrlState[] = [];

function toBuffer(body: string | Uint8Array): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** The end of a delivery: delivered or not; URLs stopped by the window say so. */
function finish(plan: Extract<NextRound, { retry: false }>, retryable: readonly UrlState[]): boolean {
  if (plan.reason === "window") for (const state of retryable) state.error = `${state.error ?? "failed"}; retry window closed`;
  return plan.reason === "delivered";
}

function emit(
  onAttempt: (event: AttemptEvent) => void,
  pending: readonly UrlState[],
  reports: readonly AttemptReport[],
  retryInMs: number | undefined,
  retried: readonly UrlState[],
): void {
  pending.forEach((state, i) => {
    const report = reports[i] as AttemptReport;
    const event: AttemptEvent = {
      url: state.target.url,
      attempt: state.attempts,
      outcome: report.outcome,
      status: report.status,
      error: report.error,
      ms: report.ms,
      request: state.request,
    };
    // Set rather than spread: one event per attempt of every message.
    if (retryInMs !== undefined && retried.includes(state)) event.retryInMs = retryInMs;
    if (report.response) event.response = report.response;
    try {
      onAttempt(event);
    } catch {
      // A faulty listener must not break delivery.
    }
  });
}
