import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES, MAX_REQUEST_BYTES } from "../../src/messages/limits.js";
import { normalizeTimestamp } from "../../src/messages/timestamps.js";
import { DEFAULT_SOURCE, authenticate, parseCalls, parseJsonBody, writeKeyOf } from "../../src/serve/ingest.js";

const basic = (key: string): string => `Basic ${Buffer.from(`${key}:`).toString("base64")}`;

describe("parseJsonBody", () => {
  it("names the 500 KB limit", () => {
    const result = parseJsonBody(Buffer.alloc(MAX_REQUEST_BYTES + 1, " "));
    expect(result).toMatchObject({ ok: false, status: 400, code: "request_too_large" });
    if (!result.ok) expect(result.error).toContain("500 KB limit");
  });

  it("names malformed JSON, empty bodies and non-objects", () => {
    for (const [raw, words] of [
      ['{"batch": [', "not valid JSON"],
      ["", "empty"],
      ["[1,2]", "must be a JSON object"],
    ] as const) {
      const result = parseJsonBody(Buffer.from(raw));
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toContain(words);
    }
  });
});

describe("write keys", () => {
  it("reads Basic auth (writeKey:) first, then the body's writeKey", () => {
    expect(writeKeyOf(basic("wk_1"), { writeKey: "other" })).toBe("wk_1");
    expect(writeKeyOf(undefined, { writeKey: "wk_2" })).toBe("wk_2");
    expect(writeKeyOf("Bearer x", undefined)).toBeUndefined();
    expect(writeKeyOf(`Basic ${Buffer.from("nokeycolon").toString("base64")}`, undefined)).toBe("nokeycolon");
  });

  it("maps keys to sources; with none configured every key (or none) is the default source", () => {
    const sources = [
      { name: "web", writeKey: "wk_web" },
      { name: "ios", writeKey: "wk_ios" },
    ];
    expect(authenticate("wk_ios", sources)).toBe("ios");
    expect(authenticate("wrong", sources)).toBeUndefined();
    expect(authenticate(undefined, sources)).toBeUndefined();
    expect(authenticate("anything", [])).toBe(DEFAULT_SOURCE);
    expect(authenticate(undefined, [])).toBe(DEFAULT_SOURCE);
  });
});

describe("parseCalls", () => {
  it("accepts a client batch, merging batch-level context and integrations under each call's own", () => {
    const result = parseCalls(
      { kind: "batch" },
      {
        batch: [
          { type: "track", userId: "u1", event: "E", context: { page: "x" }, messageId: "m1", timestamp: "2009-11-10T23:00:00+0000" },
          { type: "identify", anonymousId: "a1", integrations: { All: true } },
        ],
        context: { library: { name: "analytics-python" }, page: "batch" },
        integrations: { All: false },
        sentAt: "2024-01-01T00:00:00Z",
        writeKey: "wk",
      },
    );
    expect(result).toEqual({
      ok: true,
      rejected: [],
      calls: [
        {
          type: "track",
          userId: "u1",
          event: "E",
          messageId: "m1",
          context: { library: { name: "analytics-python" }, page: "x" },
          integrations: { All: false },
          timestamp: "2009-11-10T23:00:00.000Z",
          sentAt: "2024-01-01T00:00:00.000Z",
        },
        {
          type: "identify",
          anonymousId: "a1",
          context: { library: { name: "analytics-python" }, page: "batch" },
          integrations: { All: true },
          sentAt: "2024-01-01T00:00:00.000Z",
        },
      ],
    });
  });

  it("takes a single call's type from the path, and rejects a contradicting one", () => {
    expect(parseCalls({ kind: "single", type: "group" }, { userId: 7, groupId: "g" })).toEqual({
      ok: true,
      rejected: [],
      calls: [{ type: "group", userId: "7", groupId: "g" }],
    });
    const bad = parseCalls({ kind: "single", type: "track" }, { type: "identify", userId: "u" });
    expect(bad).toEqual({ ok: true, calls: [], rejected: [{ index: 0, reason: '"type" is "identify" but the path is /v1/track' }] });
  });

  it("drops invalid calls one by one, naming their index, and keeps the valid ones", () => {
    const result = parseCalls(
      { kind: "batch" },
      {
        batch: [
          { type: "track", userId: "u", event: "ok" },
          { type: "track", userId: "u" },
          { type: "identify", anonymousId: "a" },
        ],
      },
    );
    expect(result).toEqual({
      ok: true,
      calls: [
        { type: "track", userId: "u", event: "ok" },
        { type: "identify", anonymousId: "a" },
      ],
      rejected: [{ index: 1, reason: 'missing required key "event"' }],
    });
  });

  it.each([
    [{ type: "nope", userId: "u" }, '"type" must be one of'],
    [{ type: "identify" }, 'missing required key "userId" (or "anonymousId")'],
    [{ type: "identify", userId: "", anonymousId: null }, 'missing required key "userId" (or "anonymousId")'],
    [{ type: "group", userId: "u" }, 'missing required key "groupId"'],
    [{ type: "alias", userId: "u" }, 'missing required key "previousId"'],
    [{ type: "alias", previousId: "p" }, 'missing required key "userId"'],
    [{ type: "track", userId: "u", event: "e", properties: [1] }, 'key "properties"'],
    [{ type: "track", userId: { id: 1 }, event: "e" }, 'key "userId"'],
    [{ type: "track", userId: "u", event: "e", timestamp: "yesterday" }, 'key "timestamp": expected an ISO 8601 date-time'],
    ["just a string", "must be a JSON object"],
  ])("rejects %j", (call, words) => {
    const result = parseCalls({ kind: "batch" }, { batch: [call] });
    expect(result.ok && result.calls).toEqual([]);
    if (result.ok) expect(result.rejected[0]?.reason).toContain(words);
  });

  it("accepts version 2, null userId beside anonymousId, a screen without device context, offset timestamps", () => {
    const result = parseCalls(
      { kind: "batch" },
      {
        batch: [
          { type: "track", version: 2, userId: null, anonymousId: "a", event: "E", timestamp: "2024-01-01T00:00:00+02:00" },
          { type: "screen", userId: "u", name: "Home", context: { library: { name: "analytics-python" } } },
        ],
      },
    );
    expect(result.ok && result.rejected).toEqual([]);
    expect(result.ok && result.calls[0]).toEqual({ type: "track", anonymousId: "a", event: "E", timestamp: "2023-12-31T22:00:00.000Z" });
  });

  it("refuses the whole request (request_too_large) for one call over 32 KB, naming its index and the limit", () => {
    const big = { type: "track", userId: "u", event: "e", properties: { blob: "x".repeat(MAX_MESSAGE_BYTES) } };
    const result = parseCalls({ kind: "batch" }, { batch: [{ type: "identify", userId: "u" }, big] });
    expect(result).toMatchObject({ ok: false, status: 400, code: "request_too_large" });
    if (!result.ok) expect(result.error).toMatch(/^batch\[1\]: a call is over the 32 KB limit \(\d+ > 32768 bytes\)$/);
    const single = parseCalls({ kind: "single", type: "track" }, big);
    expect(single).toMatchObject({ ok: false, code: "request_too_large" });
  });

  it("takes the first 2,500 calls of a batch and drops the rest as one counted rejection", () => {
    const batch = Array.from({ length: 2_503 }, (_, i) => ({ type: "track", userId: `u${i}`, event: "E" }));
    const result = parseCalls({ kind: "batch" }, { batch });
    expect(result.ok && result.calls.length).toBe(2_500);
    expect(result.ok && result.calls.at(-1)?.userId).toBe("u2499");
    expect(result.ok && result.rejected).toEqual([
      { index: 2_500, count: 3, reason: "a batch holds at most 2,500 calls: the 3 from index 2500 on were dropped" },
    ]);
  });

  it("needs a batch array", () => {
    expect(parseCalls({ kind: "batch" }, { batch: {} }).ok).toBe(false);
    expect(parseCalls({ kind: "batch" }, { batch: [], context: "x" }).ok).toBe(false);
    expect(parseCalls({ kind: "batch" }, { batch: [], sentAt: "soon" })).toMatchObject({ ok: false, code: "invalid_request" });
  });
});

describe("normalizeTimestamp", () => {
  it.each([
    ["2009-11-10T23:00:00+0000", "2009-11-10T23:00:00.000Z"],
    ["2009-11-10T23:00:00+01:00", "2009-11-10T22:00:00.000Z"],
    ["2012-12-02T00:30:08.276Z", "2012-12-02T00:30:08.276Z"],
    ["2012-12-02T00:30:08.276543Z", "2012-12-02T00:30:08.276Z"],
    ["2009-11-10 23:00:00 +0000", "2009-11-10T23:00:00.000Z"],
    ["2009-11-10T23:00:00", "2009-11-10T23:00:00.000Z"],
    ["2009-11-10", "2009-11-10T00:00:00.000Z"],
    ["0099-12-31T23:59:59.9+00:00", "0099-12-31T23:59:59.900Z"],
    ["2024-02-29T12:00:00-23:59", "2024-03-01T11:59:00.000Z"],
  ])("%s → %s", (input, expected) => {
    expect(normalizeTimestamp(input)).toBe(expected);
  });

  it("refuses what is not an ISO date-time", () => {
    for (const bad of ["yesterday", "2009-13-45T99:00:00Z", 1700000000, "Tue, 10 Nov 2009 23:00:00 GMT"]) expect(normalizeTimestamp(bad)).toBeUndefined();
  });
});
