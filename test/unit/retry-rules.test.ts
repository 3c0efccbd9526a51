import { describe, expect, it } from "vitest";
import { isRetryable, retryDelayMs } from "../../src/client/retry.js";
import { resolveOptions } from "../../src/client/options.js";
import { backoffCapMs, backoffMs, classifyOutcome, honoursRetryAfter } from "../../src/delivery/policy.js";
import { backoffCeilingMs, RETRY_RULES, retriesStatus } from "../../src/delivery/retry-rules.js";
import { tlsProblem } from "../../src/delivery/tls-problem.js";
import { DEFAULT_RETRY_WINDOW_MS, DEFAULT_TIMEOUT_MS, MAX_BACKOFF_MS } from "../../src/delivery/types.js";

const STATUSES = Array.from({ length: 500 }, (_, i) => 100 + i);

describe("the retry rules, side by side", () => {
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
      expect(honoursRetryAfter(status), String(status)).toBe(status === 429 || status === 503);
    }
    expect(DEFAULT_TIMEOUT_MS).toBe(RETRY_RULES.classic.timeoutMs);
    expect(DEFAULT_RETRY_WINDOW_MS).toBe(RETRY_RULES.classic.limit.windowMs);
    expect(MAX_BACKOFF_MS).toBe(RETRY_RULES.classic.backoff.capMs);
    expect([1, 5, 50].map(backoffCapMs)).toEqual([1, 5, 50].map((n) => backoffCeilingMs(RETRY_RULES.classic, n)));
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
