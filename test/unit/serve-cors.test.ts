import { describe, expect, it } from "vitest";
import {
  ANY_ORIGIN,
  PREFLIGHT_MAX_AGE_S,
  allowedOrigins,
  corsFor,
  corsRequestOf,
  normalizeOrigin,
  preflight,
  type AllowedOrigins,
} from "../../src/serve/cors.js";

const PAGE = "http://127.0.0.1:5173";

function only(...values: string[]): AllowedOrigins {
  const result = allowedOrigins(values);
  if (!result.ok) throw new Error(result.error);
  return result.allowed;
}

describe("allowedOrigins", () => {
  it("allows any origin by default and with *", () => {
    expect(allowedOrigins([])).toEqual({ ok: true, allowed: ANY_ORIGIN });
    expect(allowedOrigins(["http://a.test", "*"])).toEqual({ ok: true, allowed: ANY_ORIGIN });
  });

  it("normalizes origins as browsers send them", () => {
    expect(only("HTTP://LocalHost:3000/", "https://app.example.com:443", "http://[::1]:80", " null ", "chrome-extension://abcdef")).toEqual({
      any: false,
      origins: new Set(["http://localhost:3000", "https://app.example.com", "http://[::1]", "null", "chrome-extension://abcdef"]),
    });
    expect(normalizeOrigin("http://bücher.example")).toBe("http://xn--bcher-kva.example");
  });

  it("refuses what is no origin, naming it", () => {
    for (const value of [
      "localhost:3000x",
      "http://localhost:3000/app",
      "http://a.test/?x",
      "http://user@a.test",
      "http://a.test#x",
      "",
      "file:///tmp/page.html",
      "not a url",
    ]) {
      const result = allowedOrigins([value]);
      expect(result.ok, value).toBe(false);
      if (!result.ok) expect(result.error).toContain(JSON.stringify(value));
    }
  });
});

describe("corsFor (every answer but a preflight)", () => {
  it("echoes an allowed origin and exposes Retry-After", () => {
    expect(corsFor({ origin: PAGE }, ANY_ORIGIN)).toEqual({
      allowed: true,
      headers: { Vary: "Origin", "Access-Control-Allow-Origin": PAGE, "Access-Control-Expose-Headers": "Retry-After" },
    });
    expect(corsFor({ origin: PAGE }, only(PAGE))).toMatchObject({ allowed: true, headers: { "Access-Control-Allow-Origin": PAGE } });
  });

  it("answers a page opened from a file (Origin: null) by default, and with a list only if null is in it", () => {
    expect(corsFor({ origin: "null" }, ANY_ORIGIN)).toMatchObject({ allowed: true, headers: { "Access-Control-Allow-Origin": "null" } });
    expect(corsFor({ origin: "null" }, only(PAGE)).allowed).toBe(false);
    expect(corsFor({ origin: "null" }, only(PAGE, "null")).allowed).toBe(true);
  });

  it("adds only Vary to a request without Origin (a server-side client)", () => {
    expect(corsFor({ origin: undefined }, only(PAGE))).toEqual({ allowed: true, headers: { Vary: "Origin" } });
  });

  it("refuses an origin not in the list, without any allow header", () => {
    const verdict = corsFor({ origin: "http://evil.test" }, only(PAGE));
    expect(verdict).toEqual({ allowed: false, headers: { Vary: "Origin" }, message: expect.stringContaining("http://evil.test") });
    // Another port is another origin.
    expect(corsFor({ origin: "http://127.0.0.1:5174" }, only(PAGE)).allowed).toBe(false);
  });

  it("never echoes a malformed Origin into a header, whatever the setting", () => {
    for (const origin of [
      "http://a.test/path",
      "http://a.test, http://b.test",
      "javascript:alert(1)",
      "http://a test",
      `http://${"a".repeat(2000)}`,
      "",
      "http://a.test\u00ff",
    ]) {
      const verdict = corsFor({ origin }, ANY_ORIGIN);
      expect(verdict.allowed, origin).toBe(false);
      expect(verdict.headers).not.toHaveProperty("Access-Control-Allow-Origin");
    }
  });

  it("never allows credentials", () => {
    expect(corsFor({ origin: PAGE }, only(PAGE)).headers).not.toHaveProperty("Access-Control-Allow-Credentials");
    expect(preflight({ origin: PAGE }, only(PAGE), ["POST"]).headers).not.toHaveProperty("Access-Control-Allow-Credentials");
  });
});

describe("preflight", () => {
  it("answers analytics.js's preflight: origin, methods, its headers and a max age", () => {
    const answer = preflight({ origin: PAGE, requestHeaders: "authorization" }, ANY_ORIGIN, ["POST"]);
    expect(answer).toEqual({
      status: 204,
      headers: {
        Vary: "Origin, Access-Control-Request-Headers, Access-Control-Request-Private-Network",
        Allow: "POST, OPTIONS",
        "Access-Control-Allow-Origin": PAGE,
        "Access-Control-Allow-Methods": "POST",
        "Access-Control-Allow-Headers": "content-type, authorization, x-retry-count",
        "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_S),
      },
    });
  });

  it("allows the headers a page asks for, once each, valid names only, boundedly", () => {
    const asked = `Authorization, X-Retry-Count,X-Custom , x-custom, bad header, (nope), ${Array.from({ length: 100 }, (_, i) => `x-h${i}`).join(",")}`;
    const allowHeaders = preflight({ origin: PAGE, requestHeaders: asked }, ANY_ORIGIN, ["POST"]).headers["Access-Control-Allow-Headers"] ?? "";
    const names = allowHeaders.split(", ");
    expect(names.slice(0, 4)).toEqual(["content-type", "authorization", "x-retry-count", "x-custom"]);
    expect(names).not.toContain("bad header");
    expect(names).not.toContain("(nope)");
    expect(names).toHaveLength(3 + 32);
  });

  it("lists GET for the settings path", () => {
    expect(preflight({ origin: PAGE }, ANY_ORIGIN, ["GET", "HEAD"]).headers).toMatchObject({
      "Access-Control-Allow-Methods": "GET, HEAD",
      Allow: "GET, HEAD, OPTIONS",
    });
  });

  it("answers 403 without allow headers to an origin not allowed", () => {
    const answer = preflight({ origin: "http://evil.test", requestHeaders: "authorization" }, only(PAGE), ["POST"]);
    expect(answer.status).toBe(403);
    expect(answer.message).toContain("http://evil.test");
    expect(Object.keys(answer.headers).filter((name) => name.startsWith("Access-Control"))).toEqual([]);
  });

  it("answers an OPTIONS without Origin (no preflight) with what the path takes", () => {
    expect(preflight({ origin: undefined }, only(PAGE), ["POST"])).toEqual({
      status: 204,
      headers: { Vary: "Origin, Access-Control-Request-Headers, Access-Control-Request-Private-Network", Allow: "POST, OPTIONS" },
    });
  });

  it("allows a private-network request only for an origin the user listed", () => {
    const asked = { origin: "https://staging.example.com", requestPrivateNetwork: "true" };
    expect(preflight(asked, only("https://staging.example.com"), ["POST"]).headers["Access-Control-Allow-Private-Network"]).toBe("true");
    expect(preflight(asked, ANY_ORIGIN, ["POST"]).headers).not.toHaveProperty("Access-Control-Allow-Private-Network");
  });

  it("reads its input from node:http's headers", () => {
    expect(corsRequestOf({ origin: PAGE, "access-control-request-headers": "authorization", "access-control-request-private-network": "true" })).toEqual({
      origin: PAGE,
      requestHeaders: "authorization",
      requestPrivateNetwork: "true",
    });
  });
});
