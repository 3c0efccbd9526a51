import type { Target } from "../settings.js";
import { sign } from "../signing.js";
import { sleep, systemClock, type Clock, type Random } from "../util/clock.js";
import { Transport, type AttemptReport } from "./attempt.js";
import { classifyOutcome, planNextRound } from "./policy.js";
import {
  DEFAULT_RETRY_WINDOW_MS,
  DEFAULT_TIMEOUT_MS,
  type AttemptEvent,
  type DeliverCall,
  type DeliveryOptions,
  type DeliveryResult,
  type PreparedRequest,
  type UrlResult,
} from "./types.js";

export interface EngineSettings {
  targets: Target[];
  secret: string | undefined;
  userAgent: string;
}

interface UrlState {
  target: Target;
  request: PreparedRequest;
  attempts: number;
  status: number | null;
  error: string | null;
  ms: number;
}

/**
 * THE delivery engine (CONTRACT.md 1 and 2): signs the exact bytes, POSTs them
 * to every target at once, retries the retryable ones together on the policy's
 * schedule, and reports; delivery failures are results, never rejections.
 */
export class DeliveryEngine {
  private readonly settings: EngineSettings;
  private readonly timeoutMs: number;
  private readonly retryWindowMs: number;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly onAttempt: ((event: AttemptEvent) => void) | undefined;
  private readonly transport: Transport;
  // The secret's UTF-8 bytes, converted once: HMAC takes a string key as exactly these bytes, and converting it per message costs more than the hash.
  private readonly key: Buffer | undefined;

  constructor(settings: EngineSettings, options: DeliveryOptions = {}) {
    this.settings = { targets: [...settings.targets], secret: settings.secret, userAgent: settings.userAgent };
    this.key = settings.secret === undefined ? undefined : Buffer.from(settings.secret, "utf8");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retryWindowMs = options.retryWindowMs ?? DEFAULT_RETRY_WINDOW_MS;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.onAttempt = options.onAttempt;
    this.transport = new Transport({
      timeoutMs: this.timeoutMs,
      ...(options.ca ? { ca: options.ca } : {}),
      ...(options.connections !== undefined ? { connections: options.connections } : {}),
    });
  }

  /** The exact request sent to `target` (CONTRACT.md 1); --dry-run prints it. */
  prepare(body: string | Uint8Array, target: Target): PreparedRequest {
    const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    return this.prepareBytes(bytes, target, this.key === undefined ? undefined : sign(this.key, bytes));
  }

  /** Delivers one message to every target; resolves with the result (never rejects for delivery failures). */
  async deliver(body: string | Uint8Array, call: DeliverCall = {}): Promise<DeliveryResult> {
    const targets = call.targets ?? this.settings.targets;
    const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    // Same bytes and secret for every target: sign once.
    const signature = this.key === undefined ? undefined : sign(this.key, bytes);
    const states: UrlState[] = targets.map((target) => ({
      target,
      request: this.prepareBytes(bytes, target, signature),
      attempts: 0,
      status: null,
      error: null,
      ms: 0,
    }));
    const result = (delivered: boolean, rounds: number, interrupted: boolean): DeliveryResult => ({
      delivered,
      rounds,
      interrupted,
      urls: states.map(({ target, status, attempts, error, ms }): UrlResult => ({ url: target.url, status, attempts, error, ms })),
    });
    if (states.length === 0) return result(false, 0, false);
    if (call.signal?.aborted) return result(false, 0, true);

    const firstAttemptAt = call.firstAttemptAt ?? this.clock.now();
    let pending = states;
    for (let round = 1; ; round++) {
      // One URL (the usual case) needs no Promise.all around its single attempt.
      const reports =
        pending.length === 1
          ? [await this.transport.post((pending[0] as UrlState).request, this.timeoutMs, this.onAttempt !== undefined)]
          : await Promise.all(pending.map((state) => this.transport.post(state.request, this.timeoutMs, this.onAttempt !== undefined)));
      pending.forEach((state, i) => record(state, reports[i] as AttemptReport));

      const plan = planNextRound({
        round,
        outcomes: reports.map((r) => r.outcome),
        now: this.clock.now(),
        firstAttemptAt,
        windowMs: this.retryWindowMs,
        random: this.random,
      });
      const retryable = pending.filter((_, i) => classifyOutcome((reports[i] as AttemptReport).outcome) === "retry");
      const stopping = plan.retry && call.signal?.aborted === true;
      this.emit(pending, reports, plan.retry && !stopping ? plan.waitMs : undefined, retryable);

      if (!plan.retry) {
        if (plan.reason === "window") for (const state of retryable) state.error = `${state.error ?? "failed"}; retry window closed`;
        return result(plan.reason === "delivered", round, false);
      }
      if (stopping) return result(false, round, true);
      // The clock's timers may be unref'd (systemClock); a caller awaiting this delivery must not see its process exit mid-wait.
      const hold = setInterval(() => {}, 1 << 30);
      try {
        await sleep(this.clock, plan.waitMs, call.signal);
      } catch {
        return result(false, round, true);
      } finally {
        clearInterval(hold);
      }
      pending = retryable;
    }

    function record(state: UrlState, report: AttemptReport): void {
      state.attempts += 1;
      state.status = report.status;
      state.error = report.error;
      state.ms += report.ms;
    }
  }

  /** Closes the keep-alive connections; waits for requests in flight. */
  async close(): Promise<void> {
    await this.transport.close();
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

  private emit(pending: readonly UrlState[], reports: readonly AttemptReport[], retryInMs: number | undefined, retried: readonly UrlState[]): void {
    if (!this.onAttempt) return;
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
        ...(retryInMs !== undefined && retried.includes(state) ? { retryInMs } : {}),
        ...(report.response ? { response: report.response } : {}),
      };
      try {
        this.onAttempt?.(event);
      } catch {
        // A faulty listener must not break delivery.
      }
    });
  }
}
