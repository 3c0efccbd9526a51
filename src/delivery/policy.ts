import type { Random } from "../util/clock.js";
import { backoffWaitMs, honoursRetryAfterOf, RETRY_RULES, retriesFailure, retriesStatus, scheduleEnded, type RetryRules } from "./retry-rules.js";
import type { AttemptOutcome } from "./types.js";

/**
 * The retry policy (docs/delivery.md#retry-schedule) as pure functions: no I/O, no clock of its
 * own, randomness passed in. The engine in deliver.ts applies it round by round. The numbers and
 * status lists are a row of retry-rules.ts: `classic` unless another is passed (`actions`).
 */

const RULES = RETRY_RULES.classic;

/** What an attempt's outcome means for its URL. */
export type AttemptVerdict = "delivered" | "retry" | "permanent";

/** Classifies one attempt: 2xx delivered; timeout, network and the row's statuses (classic: 5xx, 408, 429) retried; the rest (a function's skip too) permanent. */
export function classifyOutcome(outcome: AttemptOutcome, rules: RetryRules = RULES): AttemptVerdict {
  switch (outcome.kind) {
    case "status": {
      const { status } = outcome;
      if (status >= 200 && status < 300) return "delivered";
      // The rest is permanent: 1xx final (should not happen), a 3xx not followed, other 4xx.
      return retriesStatus(rules, status) ? "retry" : "permanent";
    }
    case "timeout":
    case "network":
    case "tls":
      return retriesFailure(rules, outcome.kind) ? "retry" : "permanent";
    case "invalid":
      return "permanent";
    // A function that skipped the event: done with this target, as a permanent answer is (the result says skipped, not failed).
    case "skipped":
      return "permanent";
  }
}

/** Full jitter: the wait before retry `n`, uniform in [0, the row's ceiling]: classic, min(5 min, 2^(n−1) s). */
export function backoffMs(retry: number, random: Random, rules: RetryRules = RULES): number {
  return backoffWaitMs(rules, retry, random);
}

/**
 * The wait before retry `n`: the largest valid Retry-After of the round when
 * there is one (it replaces the jittered wait), else full jitter.
 */
export function retryWaitMs(retry: number, random: Random, retryAfterMs: readonly (number | undefined)[] = [], rules: RetryRules = RULES): number {
  const given = retryAfterMs.filter((ms): ms is number => ms !== undefined && Number.isFinite(ms) && ms >= 0);
  if (given.length > 0) return Math.max(...given);
  return backoffMs(retry, random, rules);
}

/** No attempt starts after the window closes: `windowMs` after the first attempt. */
export function mayStartAt(startAt: number, firstAttemptAt: number, windowMs: number): boolean {
  return startAt <= firstAttemptAt + windowMs;
}

const DELIVERED: NextRound = Object.freeze({ retry: false, reason: "delivered" });

function isDelivered(outcome: AttemptOutcome): boolean {
  return outcome.kind === "status" && outcome.status >= 200 && outcome.status < 300;
}

/** planNextRound's answer when some report of the round is a 2xx (the usual round), read without building its input; else undefined. */
export function deliveredRound(reports: readonly { outcome: AttemptOutcome }[]): NextRound | undefined {
  for (const report of reports) if (isDelivered(report.outcome)) return DELIVERED;
  return undefined;
}

export type NextRound = { retry: true; waitMs: number } | { retry: false; reason: "delivered" | "permanent" | "window" };

/** What planNextRound decides from: the round just finished, the delivery's times, the jitter's randomness and the rules. */
export interface NextRoundInput {
  /** The round just finished, from 1; the next one is retry `round`. */
  round: number;
  /** How each of its attempts ended (one per URL tried). */
  outcomes: readonly AttemptOutcome[];
  /** The clock's time now, in ms. */
  now: number;
  /** When the delivery's first attempt started, in ms. */
  firstAttemptAt: number;
  /** No attempt starts later than this after the first, in ms. */
  windowMs: number;
  random: Random;
  /** A row of RETRY_RULES; default `classic`. */
  rules?: RetryRules;
}

/**
 * Decides what follows a round: stop when any URL was delivered or none can be
 * retried; otherwise wait, unless the next attempt would start after the window.
 */
export function planNextRound(input: NextRoundInput): NextRound {
  // The usual round (one URL, 2xx) allocates nothing.
  if (input.outcomes.some(isDelivered)) return DELIVERED;
  const rules: RetryRules = input.rules ?? RULES;
  const verdicts = input.outcomes.map((outcome) => classifyOutcome(outcome, rules));
  const retryable = input.outcomes.filter((_, i) => verdicts[i] === "retry");
  if (retryable.length === 0) return { retry: false, reason: "permanent" };
  // A fixed schedule (the standard row) ends with its last step, whatever Retry-After says.
  if (scheduleEnded(rules, input.round)) return { retry: false, reason: "window" };
  // A Retry-After counts only on the row's statuses (the transport reports it on any answer that has one).
  const cap = rules.retryAfter.capMs ?? Number.POSITIVE_INFINITY;
  const retryAfters = retryable.map((o) =>
    o.kind === "status" && honoursRetryAfterOf(rules, o.status) && o.retryAfterMs !== undefined ? Math.min(o.retryAfterMs, cap) : undefined,
  );
  const waitMs = retryWaitMs(input.round, input.random, retryAfters, rules);
  if (!mayStartAt(input.now + waitMs, input.firstAttemptAt, input.windowMs)) return { retry: false, reason: "window" };
  return { retry: true, waitMs };
}
