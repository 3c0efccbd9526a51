import { describe, expect, it } from "vitest";
import { describeMatch, factsOf, matches, type RequestFacts } from "../../src/receiver/match.js";
import { judgeRequest } from "../../src/receiver/verdict.js";

const judged = (body: unknown, path = "/hooks?x=1", method = "POST"): RequestFacts =>
  factsOf({ method, path, verdict: judgeRequest(Buffer.from(JSON.stringify(body)), {}, {}) });
const track = judged({ version: 1, type: "track", userId: "u1", event: "Order Completed", properties: {}, timestamp: "2024-01-01T00:00:00Z" });

describe("request matchers", () => {
  it("reads a request's facts from its verdict: a track's event, the user, what the body is", () => {
    expect(track).toEqual({ method: "POST", path: "/hooks?x=1", kind: "message", type: "track", event: "Order Completed", userId: "u1", valid: true });
    expect(judged({ version: 1, type: "screen", userId: "u1", name: "Home", timestamp: "2024-01-01T00:00:00Z" }).event).toBeNull();
    expect(judged([{ sku: "x" }])).toMatchObject({ kind: "batch", type: null, userId: null });
  });

  it("needs every field it names; a path without a query is compared without the request's", () => {
    expect(matches({}, track)).toBe(true);
    expect(matches({ type: "track", event: "Order Completed", userId: "u1", method: "post", path: "/hooks" }, track)).toBe(true);
    expect(matches({ path: "/hooks?x=1" }, track)).toBe(true);
    expect(matches({ path: "/hooks?x=2" }, track)).toBe(false);
    expect(matches({ path: "/hook" }, track)).toBe(false);
    expect(matches({ type: "track", event: "Signed Up" }, track)).toBe(false);
    expect(matches({ kind: "batch" }, track)).toBe(false);
  });

  it("a verdict filter, with a default for matchers that name none", () => {
    const invalid = { ...track, valid: false };
    expect(matches({}, invalid)).toBe(true);
    expect(matches({}, invalid, "valid")).toBe(false);
    expect(matches({ verdict: "any" }, invalid, "valid")).toBe(true);
    expect(matches({ verdict: "invalid" }, track)).toBe(false);
    expect(describeMatch({ type: "track", event: "A" }, "valid")).toBe('{type: "track", event: "A"} with a valid verdict');
    expect(describeMatch({})).toBe("any request");
  });
});
