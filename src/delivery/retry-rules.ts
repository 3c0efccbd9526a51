import type { Random } from "../util/clock.js";
import { deepFrozen } from "../util/frozen.js";

/*
 * The retry rules as data, one row per sender, side by side (as undici's retry handler keeps its
 * defaults): `classic` is the Webhooks destination (docs/delivery.md#retry-schedule), `actions` the
 * Webhooks (Actions) destination (docs/actions.md#retries), `standard` the schedule the Standard
 * Webhooks specification recommends (docs/schemes.md#retries), `client` the
 * bundled Analytics client's batch requests (docs/serve-api.md#client-library). They differ on
 * purpose: the destination retries for hours from a queue that survives it, so it waits long and
 * spreads its retries from zero up; the client runs inside someone's app, so it tries a few times
 * within seconds, never all at once with its siblings, and gives up. The policy functions
 * (delivery/policy.ts, client/retry.ts) read these rows and hold no numbers of their own.
 * Pure, and it imports nothing of the engine: the client imports it, and `import { Analytics }` must
 * load none of the engine.
 */

export interface RetryRules {
  /** HTTP answers retried: these statuses, and every status from `from` up but those in `except`. */
  readonly retried: { readonly statuses: readonly number[]; readonly from: number; readonly except?: readonly number[] };
  /** Failures before any answer that are retried; a TLS failure never is (a certificate does not mend itself). */
  readonly retriedFailures: readonly ("timeout" | "network")[];
  /** Answers whose Retry-After replaces the backoff: these statuses, or every answer's. */
  readonly retryAfter: { readonly statuses: readonly number[] | "any" /** A longer one is cut to this. */; readonly capMs?: number };
  /** Deadline of one attempt (the destination's covers connect, TLS and the response head). */
  readonly timeoutMs: number;
  /**
   * The wait before retry n: min(capMs, baseMs × 2^(n−1)), jittered: `full` anywhere from 0 up to
   * it, `half` from half of it up to it. Or a fixed `schedule`: the wait before retry n is its
   * n-th entry, and retrying ends after its last.
   */
  readonly backoff: { readonly baseMs: number; readonly capMs: number; readonly jitter: "full" | "half" } | { readonly schedule: readonly number[] };
  /** When retrying ends: no attempt starts later than `windowMs` after the first, or after `maxRetries` retries. */
  readonly limit: { readonly windowMs: number } | { readonly maxRetries: number };
  /** Whether a 3xx with a Location is followed (else it is a final answer), and how many in a row at most. */
  readonly followsRedirects: boolean;
  readonly maxRedirects: number;
}

// Both webhook destinations retry from a queue that outlives them: the same schedule and window.
const DESTINATION_BACKOFF = { baseMs: 1_000, capMs: 5 * 60_000, jitter: "full" } as const;
const DESTINATION_LIMIT = { windowMs: 4 * 60 * 60_000 } as const;

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
// Standard Webhooks' example schedule, after the immediate first attempt: 75 h 35 min 5 s in all.
const STANDARD_SCHEDULE = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR] as const;

// Frozen all the way down: the rows are public.
export const RETRY_RULES = deepFrozen({
  classic: {
    retried: { statuses: [408, 429], from: 500 },
    retriedFailures: ["timeout", "network"],
    retryAfter: { statuses: [429, 503] },
    timeoutMs: 5_000,
    backoff: DESTINATION_BACKOFF,
    limit: DESTINATION_LIMIT,
    followsRedirects: false,
    maxRedirects: 0,
  },
  // The real destination's request client retries none itself; its platform retries these
  // (its docs' retry page). The schedule and the 4 h window are the classic row's: our assumption.
  actions: {
    retried: { statuses: [408, 423, 429], from: 500, except: [501] },
    retriedFailures: ["timeout", "network"],
    retryAfter: { statuses: [429, 503] },
    timeoutMs: 10_000,
    backoff: DESTINATION_BACKOFF,
    limit: DESTINATION_LIMIT,
    // Its fetch-based client sets no `redirect`: fetch follows, 20 at most.
    followsRedirects: true,
    maxRedirects: 20,
  },
  // Its spec: any answer but a 2xx fails and is retried (a 3xx too: update the URL instead of
  // following), except 410 Gone, which asks the sender to stop; Retry-After is taken into account.
  standard: {
    retried: { statuses: [], from: 300, except: [410] },
    retriedFailures: ["timeout", "network"],
    // Capped at the schedule's longest step, so one answer cannot park a message for days.
    retryAfter: { statuses: "any", capMs: 24 * HOUR },
    // "Somewhere between 15 and 30 s", its spec says.
    timeoutMs: 15 * SECOND,
    backoff: { schedule: STANDARD_SCHEDULE },
    limit: { windowMs: STANDARD_SCHEDULE.reduce((sum, ms) => sum + ms, 0) },
    followsRedirects: false,
    maxRedirects: 0,
  },
  client: {
    retried: { statuses: [429], from: 500 },
    retriedFailures: ["timeout", "network"],
    // Capped, so one answer cannot park a batch (and close()) for hours.
    retryAfter: { statuses: "any", capMs: 5 * 60_000 },
    timeoutMs: 10_000,
    backoff: { baseMs: 100, capMs: 10_000, jitter: "half" },
    limit: { maxRetries: 3 },
    followsRedirects: false,
    maxRedirects: 0,
  },
} as const satisfies Record<string, RetryRules>);

/** Whether `rules` retry an answer with this status. */
export function retriesStatus(rules: RetryRules, status: number): boolean {
  const { statuses, from, except } = rules.retried;
  return (status >= from && except?.includes(status) !== true) || statuses.includes(status);
}

/** Whether `rules` retry a failure before any answer (a timeout, the network, TLS). */
export function retriesFailure(rules: RetryRules, kind: "timeout" | "network" | "tls"): boolean {
  return kind !== "tls" && rules.retriedFailures.includes(kind);
}

/** Whether an answer's Retry-After counts under `rules`. */
export function honoursRetryAfterOf(rules: RetryRules, status: number): boolean {
  const { statuses } = rules.retryAfter;
  return statuses === "any" || statuses.includes(status);
}

/**
 * The upper bound of the wait before retry `n` (1-based): min(capMs, baseMs × 2^(n−1)), or the
 * schedule's n-th step (Infinity past its end); 0 before the first.
 */
export function backoffCeilingMs(rules: RetryRules, retry: number): number {
  if (retry < 1) return 0;
  if ("schedule" in rules.backoff) return rules.backoff.schedule[retry - 1] ?? Number.POSITIVE_INFINITY;
  const { baseMs, capMs } = rules.backoff;
  // 2^20 times any base here is far above its cap; avoid huge exponents.
  return Math.min(capMs, baseMs * 2 ** Math.min(retry - 1, 20));
}

/** Whether a row with a fixed schedule has no step left for retry `n`. */
export function scheduleEnded(rules: RetryRules, retry: number): boolean {
  return "schedule" in rules.backoff && retry > rules.backoff.schedule.length;
}

/** The jittered wait before retry `n`, by the row's kind of jitter; a schedule's step as it is. */
export function backoffWaitMs(rules: RetryRules, retry: number, random: Random): number {
  const ceiling = backoffCeilingMs(rules, retry);
  if ("schedule" in rules.backoff) return ceiling;
  return Math.round(rules.backoff.jitter === "full" ? random() * ceiling : ceiling * (0.5 + random() / 2));
}
