import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { hasRoutes, parseForwardRoutes, routeFor } from "../../src/receiver/forward-routes.js";

const A = "http://127.0.0.1:3001/track";
const B = "http://127.0.0.1:3000/webhook";

function refusal(values: string[]): string {
  try {
    parseForwardRoutes(values);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).source).toEqual({ field: "forwardTo" });
    return (error as Error).message;
  }
  throw new Error(`no error for ${values.join(" ")}`);
}

describe("parseForwardRoutes (docs/receiver.md#routing)", () => {
  it("TYPE=URL routes a message type; a URL without a type is the default", () => {
    expect(parseForwardRoutes([`track=${A}`, B, `identify=${A}`])).toEqual({ fallback: B, byType: { track: A, identify: A } });
    expect(parseForwardRoutes([B])).toEqual({ fallback: B, byType: {} });
    expect(parseForwardRoutes([])).toEqual({ fallback: null, byType: {} });
    expect(hasRoutes(parseForwardRoutes([]))).toBe(false);
    expect(hasRoutes(parseForwardRoutes([`delete=${A}`]))).toBe(true);
  });

  it("a value whose prefix is no message type is a URL, = and all", () => {
    const withQuery = "http://127.0.0.1:3000/hook?type=track&a=b";
    expect(parseForwardRoutes([withQuery])).toEqual({ fallback: withQuery, byType: {} });
    expect(parseForwardRoutes([`page=${withQuery}`])).toEqual({ fallback: null, byType: { page: withQuery } });
  });

  it("two defaults are refused, naming both (a second --forward-to no longer replaces the first)", () => {
    const message = refusal([B, A]);
    expect(message).toContain(B);
    expect(message).toContain(A);
    expect(message).toMatch(/two URLs without a type/);
  });

  it("one type routed twice is refused, naming both URLs", () => {
    const message = refusal([`track=${A}`, `track=${B}`]);
    expect(message).toMatch(/track is routed twice/);
    expect(message).toContain(A);
    expect(message).toContain(B);
  });

  it("a mistyped type is named as such, with the type it resembles", () => {
    expect(refusal([`trak=${A}`])).toMatch(/"trak" in .* is not a message type \(did you mean track\?\)/);
    expect(refusal([`Identify=${A}`])).toMatch(/did you mean identify\?/);
  });
});

describe("routeFor", () => {
  const routes = { fallback: B, byType: { track: A } };
  const onlyTyped = { fallback: null, byType: { track: A } };

  it("a message of a routed type goes to its URL; others, batches, payloads and bodies that are no message to the default", () => {
    expect(routeFor(routes, { bodyKind: "message", type: "track" })).toBe(A);
    expect(routeFor(routes, { bodyKind: "message", type: "identify" })).toBe(B);
    for (const bodyKind of ["batch", "payload", "none", "invalid"] as const) expect(routeFor(routes, { bodyKind, type: undefined })).toBe(B);
  });

  it("without a default, what no type route takes is answered by listen (null)", () => {
    expect(routeFor(onlyTyped, { bodyKind: "message", type: "track" })).toBe(A);
    expect(routeFor(onlyTyped, { bodyKind: "message", type: "page" })).toBeNull();
    expect(routeFor(onlyTyped, { bodyKind: "batch", type: undefined })).toBeNull();
  });
});
