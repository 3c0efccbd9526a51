import { describe, expect, it } from "vitest";
import { backoffMs, classifyOutcome, deliveredRound, mayStartAt, planNextRound, retryWaitMs } from "../../src/delivery/policy.js";
import { backoffCeilingMs, RETRY_RULES } from "../../src/delivery/retry-rules.js";
import { parseRetryAfter } from "../../src/util/retry-after.js";
import { DEFAULT_RETRY_WINDOW_MS, MAX_BACKOFF_MS, type AttemptOutcome } from "../../src/delivery/types.js";
import { seededRandom } from "../../src/util/clock.js";

/** The ceiling of the destination's (classic) jittered wait before retry `n`. */
const backoffCapMs = (retry: number): number => backoffCeilingMs(RETRY_RULES.classic, retry);

const status = (code: number, retryAfterMs?: number): AttemptOutcome =>
  retryAfterMs === undefined ? { kind: "status", status: code } : { kind: "status", status: code, retryAfterMs };

describe("classifyOutcome", () => {
  it("counts any 2xx as delivered", () => {
    for (const code of [200, 201, 202, 204, 299]) expect(classifyOutcome(status(code))).toBe("delivered");
  });

  it("retries 5xx, 408, 429, timeouts and network errors", () => {
    for (const code of [500, 502, 503, 504, 599, 408, 429]) expect(classifyOutcome(status(code))).toBe("retry");
    expect(classifyOutcome({ kind: "timeout" })).toBe("retry");
    expect(classifyOutcome({ kind: "network", code: "ECONNREFUSED" })).toBe("retry");
    expect(classifyOutcome({ kind: "network", code: "ECONNRESET" })).toBe("retry");
    expect(classifyOutcome({ kind: "network", code: "ENOTFOUND" })).toBe("retry");
  });

  it("gives up at once on other 4xx, 3xx, TLS and invalid arguments", () => {
    for (const code of [400, 401, 403, 404, 409, 410, 422, 301, 302, 307, 308]) expect(classifyOutcome(status(code))).toBe("permanent");
    expect(classifyOutcome({ kind: "tls", code: "DEPTH_ZERO_SELF_SIGNED_CERT" })).toBe("permanent");
    expect(classifyOutcome({ kind: "invalid", reason: "bad url" })).toBe("permanent");
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2024-01-01T00:00:00.000Z");

  it("reads delay-seconds", () => {
    expect(parseRetryAfter("1", now)).toBe(1000);
    expect(parseRetryAfter(" 120 ", now)).toBe(120_000);
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter(["7", "9"], now)).toBe(7000);
  });

  it("reads an HTTP-date relative to now; a past date means now", () => {
    expect(parseRetryAfter("Mon, 01 Jan 2024 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sun, 31 Dec 2023 23:00:00 GMT", now)).toBe(0);
  });

  it("ignores invalid values", () => {
    for (const bad of ["", "soon", "-1", "1.5", "1e3", "12abc", "Mon, 99 Foo 2024"]) expect(parseRetryAfter(bad, now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe("backoff", () => {
  it("caps retry n at min(5 min, 2^(n-1) s)", () => {
    expect([1, 2, 3, 4, 9, 10, 11, 50].map(backoffCapMs)).toEqual([1000, 2000, 4000, 8000, 256_000, MAX_BACKOFF_MS, MAX_BACKOFF_MS, MAX_BACKOFF_MS]);
  });

  it("draws the wait uniformly in [0, cap] from the injected random", () => {
    expect(backoffMs(3, () => 0)).toBe(0);
    expect(backoffMs(3, () => 0.5)).toBe(2000);
    expect(backoffMs(3, () => 0.999_999_9)).toBe(4000);
    const random = seededRandom(42);
    const waits = Array.from({ length: 2000 }, () => backoffMs(4, random));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...waits)).toBeLessThanOrEqual(8000);
    // Uniform, not clustered at the cap: the mean sits near the middle.
    const mean = waits.reduce((a, b) => a + b, 0) / waits.length;
    expect(mean).toBeGreaterThan(3500);
    expect(mean).toBeLessThan(4500);
  });

  it("lets the largest valid Retry-After of the round replace the jittered wait", () => {
    expect(retryWaitMs(1, () => 1, [undefined, 3000, 1000])).toBe(3000);
    // Even beyond the 5-minute cap: the server asked for it.
    expect(retryWaitMs(1, () => 1, [600_000])).toBe(600_000);
    expect(retryWaitMs(2, () => 0.5, [undefined, Number.NaN, -5])).toBe(1000);
  });
});

describe("planNextRound", () => {
  const base = { round: 1, now: 0, firstAttemptAt: 0, windowMs: 10_000, random: () => 0.5 };

  it("stops as soon as any URL is delivered, even if others would retry", () => {
    expect(planNextRound({ ...base, outcomes: [status(500), status(200)] })).toEqual({ retry: false, reason: "delivered" });
  });

  it("deliveredRound gives planNextRound's answer for a round with a 2xx, and nothing otherwise", () => {
    for (const outcomes of [[status(200)], [status(500), status(204)], [{ kind: "timeout" as const }, status(299)]]) {
      expect(deliveredRound(outcomes.map((outcome) => ({ outcome })))).toEqual(planNextRound({ ...base, outcomes }));
    }
    for (const outcomes of [[status(500)], [status(300), status(199)], [{ kind: "network" as const, code: "ECONNRESET" }], []]) {
      expect(deliveredRound(outcomes.map((outcome) => ({ outcome })))).toBeUndefined();
    }
  });

  it("stops when nothing is retryable", () => {
    expect(planNextRound({ ...base, outcomes: [status(400), { kind: "tls", code: "X" }] })).toEqual({ retry: false, reason: "permanent" });
  });

  it("retries the retryable ones, honouring only their Retry-After", () => {
    expect(planNextRound({ ...base, outcomes: [status(500), status(404)] })).toEqual({ retry: true, waitMs: 500 });
    expect(planNextRound({ ...base, outcomes: [status(429, 2000), status(503, 4000), { kind: "timeout" }] })).toEqual({ retry: true, waitMs: 4000 });
  });

  it("starts no attempt after the window closes", () => {
    expect(planNextRound({ ...base, now: 9_000, outcomes: [status(500)] })).toEqual({ retry: true, waitMs: 500 });
    expect(mayStartAt(10_000, 0, 10_000)).toBe(true);
    expect(planNextRound({ ...base, now: 9_600, outcomes: [status(500)] })).toEqual({ retry: false, reason: "window" });
    expect(planNextRound({ ...base, outcomes: [status(429, 11_000)] })).toEqual({ retry: false, reason: "window" });
  });
});

/** Runs the policy alone for an endpoint that always fails, returning every attempt's start time. */
function schedule(random: () => number, windowMs = DEFAULT_RETRY_WINDOW_MS, attemptMs = 0): number[] {
  const starts: number[] = [];
  let now = 0;
  for (let round = 1; round < 100_000; round++) {
    starts.push(now);
    now += attemptMs;
    const plan = planNextRound({ round, outcomes: [status(500)], now, firstAttemptAt: 0, windowMs, random });
    if (!plan.retry) break;
    now += plan.waitMs;
  }
  return starts;
}

describe("the 4-hour schedule", () => {
  it("with the largest draws: 1, 2, 4 … 256 s, then every 5 min until the window closes", () => {
    const starts = schedule(() => 1);
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] as number));
    expect(gaps.slice(0, 9)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256].map((s) => s * 1000));
    expect(gaps.slice(9).every((g) => g === MAX_BACKOFF_MS)).toBe(true);
    // 511 s of doubling, then floor((14400 − 511) / 300) = 46 capped waits: 1 + 9 + 46 attempts.
    expect(starts).toHaveLength(56);
    expect(starts.at(-1)).toBeLessThanOrEqual(DEFAULT_RETRY_WINDOW_MS);
    expect((starts.at(-1) as number) + MAX_BACKOFF_MS).toBeGreaterThan(DEFAULT_RETRY_WINDOW_MS);
  });

  it("with half draws: twice as many capped retries", () => {
    const starts = schedule(() => 0.5);
    // 255.5 s of doubling, then floor((14400 − 255.5) / 150) = 94 waits of 150 s.
    expect(starts).toHaveLength(1 + 9 + 94);
  });

  it("with real jitter: every gap within its bound and no attempt after 4 h", () => {
    const starts = schedule(seededRandom(7), DEFAULT_RETRY_WINDOW_MS, 5_000);
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] as number) - 5_000);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(0);
      expect(gap).toBeLessThanOrEqual(backoffCapMs(i + 1));
    });
    expect(starts.every((t) => t <= DEFAULT_RETRY_WINDOW_MS)).toBe(true);
    // Mean capped wait is 150 s plus 5 s per attempt: roughly 90 attempts, give or take.
    expect(starts.length).toBeGreaterThan(60);
    expect(starts.length).toBeLessThan(130);
  });

  it("a short window (CI) allows only the retries that fit", () => {
    const starts = schedule(() => 1, 3_000);
    expect(starts).toEqual([0, 1000, 3000]);
  });
});
