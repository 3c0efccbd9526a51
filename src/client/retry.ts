import { backoffWaitMs, RETRY_RULES, retriesFailure, retriesStatus } from "../delivery/retry-rules.js";
import type { Random } from "../util/clock.js";

/** Retry policy of batch requests (pure): what is retried and how long to wait, by the `client` row of the retry rules. */

const RULES = RETRY_RULES.client;
/** A longer Retry-After is capped, so one answer cannot park a batch (and close()) for hours. */
export const MAX_RETRY_AFTER_MS = RULES.retryAfter.capMs;

/** How one batch request ended. */
export type SendOutcome =
  | { kind: "status"; status: number; retryAfterMs?: number | undefined; body: string }
  | { kind: "timeout" }
  | { kind: "network"; code: string; message: string }
  | { kind: "tls"; code: string; message: string };

/** Network errors, timeouts, 5xx and 429 are retried; other statuses (4xx, 3xx) are final. */
export function isRetryable(outcome: SendOutcome): boolean {
  return outcome.kind === "status" ? retriesStatus(RULES, outcome.status) : retriesFailure(RULES, outcome.kind);
}

export function isSuccess(outcome: SendOutcome): boolean {
  return outcome.kind === "status" && outcome.status >= 200 && outcome.status < 300;
}

/**
 * Wait before retry `n` (1-based): exponential, capped, with jitter in
 * [half, full] so clients that failed together do not retry together.
 * A Retry-After from the server replaces it.
 */
export function retryDelayMs(n: number, random: Random, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  return backoffWaitMs(RULES, n, random);
}

export function describeOutcome(outcome: SendOutcome): string {
  switch (outcome.kind) {
    case "status": {
      const body = outcome.body.trim();
      return `HTTP ${outcome.status}${body ? `: ${body.length > 200 ? `${body.slice(0, 200)}…` : body}` : ""}`;
    }
    case "timeout":
      return "timed out";
    case "network":
    case "tls":
      return `${outcome.code}: ${outcome.message}`;
  }
}
