import { describe, expect, it } from "vitest";
import { isRetryable, retryDelayMs } from "../../src/client/retry.js";
import { resolveOptions } from "../../src/client/options.js";
import { backoffMs, classifyOutcome, planNextRound } from "../../src/delivery/policy.js";
import { backoffCeilingMs, honoursRetryAfterOf, RETRY_RULES, retriesStatus } from "../../src/delivery/retry-rules.js";
import { tlsProblem } from "../../src/delivery/tls-problem.js";
import { DEFAULT_RETRY_WINDOW_MS, DEFAULT_TIMEOUT_MS, MAX_BACKOFF_MS, type AttemptOutcome } from "../../src/delivery/types.js";

const STATUSES = Array.from({ length: 500 }, (_, i) => 100 + i);

describe("the retry rules, side by side", () => {
  it("are frozen all the way down: a write to the exported rows changes nothing", () => {
    const rows = Object.values(RETRY_RULES);
    expect(rows.length).toBe(4);
    expect(Object.isFrozen(RETRY_RULES)).toBe(true);
    for (const row of rows)
      for (const part of [row, row.retried, row.retried.statuses, row.retryAfter, row.backoff, row.limit]) expect(Object.isFrozen(part)).toBe(true);
    expect(() => {
      (RETRY_RULES.classic as { timeoutMs: number }).timeoutMs = 1;
    }).toThrow(TypeError);
    expect(RETRY_RULES.classic.timeoutMs).toBe(5_000);
  });

  it("say how the destination and the client differ", () => {
    const retried = (rules: (typeof RETRY_RULES)[keyof typeof RETRY_RULES]) =>
      [408, 429, 500, 503, 599, 400, 404, 301].filter((status) => retriesStatus(rules, status));
    expect(retried(RETRY_RULES.classic)).toEqual([408, 429, 500, 503, 599]);
    expect(retried(RETRY_RULES.client)).toEqual([429, 500, 503, 599]);
    expect(retried(RETRY_RULES.actions)).toEqual([408, 429, 500, 503, 599]);
    expect([1, 2, 3, 9, 10, 20].map((n) => backoffCeilingMs(RETRY_RULES.classic, n))).toEqual([1000, 2000, 4000, 256_000, 300_000, 300_000]);
    expect([1, 2, 3, 7, 8, 20].map((n) => backoffCeilingMs(RETRY_RULES.client, n))).toEqual([100, 200, 400, 6400, 10_000, 10_000]);
  });

  it("the destination's policy reads the classic row, status by status", () => {
    for (const status of STATUSES) {
      const verdict = classifyOutcome({ kind: "status", status });
      expect(verdict, String(status)).toBe(status >= 200 && status < 300 ? "delivered" : retriesStatus(RETRY_RULES.classic, status) ? "retry" : "permanent");
      expect(honoursRetryAfterOf(RETRY_RULES.classic, status), String(status)).toBe(status === 429 || status === 503);
    }
    expect(DEFAULT_TIMEOUT_MS).toBe(RETRY_RULES.classic.timeoutMs);
    expect(DEFAULT_RETRY_WINDOW_MS).toBe(RETRY_RULES.classic.limit.windowMs);
    expect(MAX_BACKOFF_MS).toBe(RETRY_RULES.classic.backoff.capMs);
    // Full jitter: from 0 up to the ceiling.
    expect(backoffMs(3, () => 0)).toBe(0);
    expect(backoffMs(3, () => 0.5)).toBe(2000);
  });

  it("the Webhooks (Actions) row: 423 too, 501 not; 10 s; the classic schedule and window; redirects followed, 20 at most", () => {
    const actions = RETRY_RULES.actions;
    for (const status of STATUSES) {
      const retried = status === 408 || status === 423 || status === 429 || (status >= 500 && status !== 501);
      expect(classifyOutcome({ kind: "status", status }, actions), String(status)).toBe(
        status >= 200 && status < 300 ? "delivered" : retried ? "retry" : "permanent",
      );
    }
    expect(classifyOutcome({ kind: "status", status: 423 })).toBe("permanent");
    expect(classifyOutcome({ kind: "status", status: 501 })).toBe("retry");
    expect(actions.timeoutMs).toBe(10_000);
    expect(actions.backoff).toEqual(RETRY_RULES.classic.backoff);
    expect(actions.limit).toEqual(RETRY_RULES.classic.limit);
    expect([actions.followsRedirects, actions.maxRedirects]).toEqual([true, 20]);
    expect([RETRY_RULES.classic.followsRedirects, RETRY_RULES.client.followsRedirects]).toEqual([false, false]);
  });

  it("the client's policy reads the client row, and its defaults are the row's", () => {
    for (const status of STATUSES) expect(isRetryable({ kind: "status", status, body: "" }), String(status)).toBe(retriesStatus(RETRY_RULES.client, status));
    // Half jitter: from half the ceiling up to it.
    expect(retryDelayMs(3, () => 0)).toBe(200);
    expect(retryDelayMs(3, () => 0.5)).toBe(300);
    const defaults = resolveOptions("wk", {});
    expect(defaults.timeout).toBe(RETRY_RULES.client.timeoutMs);
    expect(defaults.maxRetries).toBe(RETRY_RULES.client.limit.maxRetries);
  });
});

describe("the one TLS classifier", () => {
  it("words the certificate problems it knows, names the others by code, and knows a failed handshake", () => {
    expect(tlsProblem("DEPTH_ZERO_SELF_SIGNED_CERT")).toEqual({ kind: "certificate", problem: "self-signed certificate" });
    expect(tlsProblem("HOSTNAME_MISMATCH")).toEqual({ kind: "certificate", problem: "issued for another host name" });
    expect(tlsProblem("CERT_CHAIN_TOO_LONG")).toEqual({ kind: "certificate", problem: "CERT_CHAIN_TOO_LONG" });
    expect(tlsProblem("ERR_SSL_WRONG_VERSION_NUMBER")).toEqual({ kind: "handshake" });
    expect(tlsProblem("ERR_TLS_HANDSHAKE_TIMEOUT")).toEqual({ kind: "handshake" });
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "UND_ERR_SOCKET", ""]) expect(tlsProblem(code), code).toBeUndefined();
  });
});

describe("the standard row: Standard Webhooks' schedule, in virtual time through the engine's planner", () => {
  const rules = RETRY_RULES.standard;
  const H = 3_600_000;
  const outcome = (code: number, retryAfterMs?: number): AttemptOutcome => ({
    kind: "status",
    status: code,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
  // No jitter: the randomness is never read.
  const random = (): number => {
    throw new Error("the schedule is fixed: no randomness");
  };

  /** Each attempt's start (ms after the first) while `answer(round)` comes back, and why retrying stopped. */
  function run(answer: (round: number) => AttemptOutcome): { starts: number[]; stop: string } {
    const starts: number[] = [];
    let now = 0;
    for (let round = 1; round < 1_000; round++) {
      starts.push(now);
      const plan = planNextRound({ round, outcomes: [answer(round)], now, firstAttemptAt: 0, windowMs: rules.limit.windowMs, random, rules });
      if (!plan.retry) return { starts, stop: plan.reason };
      now += plan.waitMs;
    }
    throw new Error("never stopped");
  }

  it("attempts immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, then stops (75 h 35 min 5 s)", () => {
    const { starts, stop } = run(() => outcome(500));
    const at = (h: number, m: number, s: number) => h * H + m * 60_000 + s * 1_000;
    expect(starts).toEqual([0, at(0, 0, 5), at(0, 5, 5), at(0, 35, 5), at(2, 35, 5), at(7, 35, 5), at(17, 35, 5), at(31, 35, 5), at(51, 35, 5), at(75, 35, 5)]);
    expect(stop).toBe("window");
    expect(rules.limit.windowMs).toBe(at(75, 35, 5));
  });

  it("retries every answer but a 2xx, a 3xx and a 4xx too; 410 Gone stops", () => {
    for (const code of STATUSES) {
      const expected = code >= 200 && code < 300 ? "delivered" : code === 410 || code < 200 ? "permanent" : "retry";
      expect(classifyOutcome(outcome(code), rules), String(code)).toBe(expected);
    }
    expect(run((round) => outcome(round === 3 ? 410 : 503))).toEqual({ starts: [0, 5_000, 305_000], stop: "permanent" });
    expect(classifyOutcome({ kind: "timeout" }, rules)).toBe("retry");
    expect(classifyOutcome({ kind: "tls", code: "CERT_HAS_EXPIRED" }, rules)).toBe("permanent");
  });

  it("a Retry-After replaces the step, on any answer, capped at 24 h; the schedule still ends after its last step", () => {
    expect(run((round) => outcome(round === 2 ? 429 : 500, round === 2 ? 60_000 : undefined)).starts.slice(0, 4)).toEqual([
      0,
      5_000,
      65_000,
      65_000 + 30 * 60_000,
    ]);
    const threeDays = run((round) => outcome(round === 1 ? 404 : 500, round === 1 ? 72 * H : undefined));
    expect(threeDays.starts[1]).toBe(24 * H);
    const alwaysSoon = run(() => outcome(503, 1_000));
    expect(alwaysSoon.starts).toHaveLength(10);
    expect(alwaysSoon.stop).toBe("window");
  });

  it("gives an attempt 15 s and follows no redirect", () => {
    expect([rules.timeoutMs, rules.followsRedirects]).toEqual([15_000, false]);
  });
});
