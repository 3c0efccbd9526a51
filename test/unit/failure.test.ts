import { describe, expect, it } from "vitest";
import { failureOf } from "../../src/delivery/failure.js";
import type { DeliveryResult } from "../../src/delivery/types.js";

const result = (urls: DeliveryResult["urls"]): DeliveryResult => ({ delivered: false, interrupted: false, rounds: 3, urls });
const a = { url: "http://a/", status: 503, attempts: 3, error: "HTTP 503; retry window closed", ms: 10 };
const b = { url: "http://b/", status: null, attempts: 1, error: "TLS: nope", ms: 1 };

describe("failureOf: one failure record for dead letters and serve's failed table", () => {
  it("replay's wording: the error alone for one URL, URL-named for several; most attempts; first status", () => {
    expect(failureOf(result([a]))).toEqual({ reason: "HTTP 503; retry window closed", attempts: 3, status: 503 });
    expect(failureOf(result([b, a]))).toEqual({ reason: "http://b/: TLS: nope; http://a/: HTTP 503; retry window closed", attempts: 3, status: 503 });
    expect(failureOf(result([a]), { reason: "interrupted" })).toEqual({ reason: "interrupted", attempts: 3, status: 503 });
    expect(failureOf(result([]))).toEqual({ reason: "not delivered", attempts: 0, status: null });
  });

  it("serve's wording: every URL named, a status when there is no error, and no URL configured", () => {
    expect(failureOf(result([a]), { alwaysNameUrl: true }).reason).toBe("http://a/: HTTP 503; retry window closed");
    expect(failureOf(result([{ ...a, error: null, status: 200 }]), { alwaysNameUrl: true }).reason).toBe("http://a/: status 200");
    expect(failureOf(result([]), { alwaysNameUrl: true })).toEqual({ reason: "no webhook URL configured", attempts: 0, status: null });
  });
});
