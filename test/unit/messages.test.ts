import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkMessage, userIdOf } from "../../src/messages/check.js";
import { buildExamples } from "../../src/messages/examples.js";
import { isTimestamp, MESSAGE_TYPES, schemaFor, type MessageType } from "../../src/messages/schemas.js";

const NOW = new Date("2012-12-02T00:30:08.276Z");
const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../fixtures/${name}.json`, import.meta.url), "utf8")) as Record<string, unknown>;

/** The exact keys of each built request body (docs/messages.md#message-types). */
const BUILT_KEYS: Record<MessageType, string[]> = {
  page: ["version", "type", "userId", "properties", "timestamp"],
  screen: ["version", "type", "userId", "name", "timestamp", "context"],
  identify: ["version", "type", "userId", "traits", "timestamp"],
  track: ["version", "type", "userId", "event", "properties", "timestamp"],
  alias: ["version", "type", "Previous ID", "User ID", "timestamp"],
  group: ["version", "type", "groupId", "userId", "traits", "timestamp"],
  delete: ["type", "userId", "timestamp"],
};

describe("examples", () => {
  it("cover the seven types, each with exactly the keys of docs/messages.md#built-messages", () => {
    const examples = buildExamples(MESSAGE_TYPES, { now: NOW, seed: 1 });
    expect(examples.map((m) => m.type)).toEqual([...MESSAGE_TYPES]);
    for (const example of examples) {
      expect(Object.keys(example).sort()).toEqual([...BUILT_KEYS[example.type]].sort());
    }
  });

  it.each([1, 2, 3, 99])("validate strictly against their schema (seed %i)", (seed) => {
    for (const example of buildExamples(MESSAGE_TYPES, { now: NOW, seed })) {
      expect(checkMessage(example, { strict: true })).toEqual({ type: example.type, errors: [], warnings: [] });
      expect(schemaFor(example.type).safeParse(example).success).toBe(true);
    }
  });

  it("are deterministic for the same seed and time, and differ across seeds", () => {
    expect(buildExamples(MESSAGE_TYPES, { now: NOW, seed: 5 })).toEqual(buildExamples(MESSAGE_TYPES, { now: NOW, seed: 5 }));
    expect(buildExamples(MESSAGE_TYPES, { now: NOW, seed: 5 })).not.toEqual(buildExamples(MESSAGE_TYPES, { now: NOW, seed: 6 }));
  });

  it("apply overrides", () => {
    const [track, identify] = buildExamples(["track", "identify"], {
      now: NOW,
      seed: 1,
      userId: "u_42",
      event: "Signed Up",
      properties: { plan: "pro" },
      traits: { vip: true },
    });
    expect(track).toMatchObject({ userId: "u_42", event: "Signed Up", properties: { plan: "pro" } });
    expect(identify).toMatchObject({ userId: "u_42", traits: { vip: true } });
  });

  it("use camelCase alias keys on request, and those validate too", () => {
    const [alias] = buildExamples(["alias"], { now: NOW, seed: 1, aliasKeys: "camel" });
    expect(Object.keys(alias ?? {}).sort()).toEqual(["previousId", "timestamp", "type", "userId", "version"]);
    expect(checkMessage(alias, { strict: true }).errors).toEqual([]);
    expect(schemaFor("alias", "camel").safeParse(alias).success).toBe(true);
  });
});

describe("fixtures", () => {
  it.each(["track-anonymous-v2", "screen-server-side", "identify-offset", "page-named"])(
    "real-traffic/%s.json is accepted (strict only objects to unknown keys)",
    (name) => {
      const message = JSON.parse(readFileSync(new URL(`../../fixtures/real-traffic/${name}.json`, import.meta.url), "utf8")) as Record<string, unknown>;
      expect(checkMessage(message).errors).toEqual([]);
      expect(checkMessage(message, { strict: true }).errors.map((e) => e.key)).toEqual(name === "page-named" ? ["projectId", "writeKey"] : []);
    },
  );

  it.each([...MESSAGE_TYPES, "alias-camel"])("fixtures/%s.json validates strictly", (name) => {
    expect(checkMessage(fixture(name), { strict: true }).errors).toEqual([]);
  });

  it("every line of fixtures/events.ndjson carries a valid message", () => {
    const lines = readFileSync(new URL("../../fixtures/events.ndjson", import.meta.url), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(7);
    const types = lines.map((line) => {
      const envelope = JSON.parse(line) as { body: unknown };
      const check = checkMessage(envelope.body, { strict: true });
      expect(check.errors).toEqual([]);
      return check.type;
    });
    expect(new Set(types)).toEqual(new Set(MESSAGE_TYPES));
  });
});

describe("checkMessage", () => {
  const track = () => fixture("track");

  it("names a missing key", () => {
    const { event: _event, ...rest } = track();
    expect(checkMessage(rest).errors).toEqual([{ key: "event", message: 'missing required key "event"' }]);
  });

  it("names an extra key: a warning, an error under strict", () => {
    const message = { ...track(), extra: 1 };
    expect(checkMessage(message).errors).toEqual([]);
    expect(checkMessage(message).warnings).toEqual([{ key: "extra", message: 'unknown key "extra" for type track' }]);
    expect(checkMessage(message, { strict: true }).errors.map((e) => e.key)).toEqual(["extra"]);
  });

  it("names a wrongly typed key", () => {
    const errors = checkMessage({ ...track(), userId: 42 }).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]?.key).toBe("userId");
    expect(errors[0]?.message).toMatch(/^key "userId": .*string/);
  });

  it.each(["2012-12-02T00:30:08Z", "2012-12-02T00:30:08.276+01:00", "2009-11-10T23:00:00+0000", "2012-12-02T00:30:08.276543Z", "2012-12-02T00:30:08-05:00"])(
    "accepts the real-traffic timestamp %s (docs/messages.md#accepted-messages)",
    (timestamp) => {
      expect(checkMessage({ ...track(), timestamp }, { strict: true }).errors).toEqual([]);
      expect(checkMessage({ ...track(), sentAt: timestamp, receivedAt: timestamp, originalTimestamp: timestamp }, { strict: true }).errors).toEqual([]);
    },
  );

  it.each(["2012-02-30T00:00:00.000Z", "yesterday", "2012-12-02T24:00:00Z", "2012-12-02T00:30:08+2500", "Tue, 10 Nov 2009 23:00:00 GMT"])(
    "rejects the timestamp %s, naming the key and the value",
    (timestamp) => {
      const errors = checkMessage({ ...track(), timestamp }).errors;
      expect(errors.map((e) => e.key)).toEqual(["timestamp"]);
      expect(errors[0]?.message).toContain("ISO 8601");
      expect(errors[0]?.message).toContain(timestamp.slice(0, 10));
    },
  );

  it("accepts any positive integer version; rejects 0, fractions, strings; a version on delete is unknown", () => {
    for (const version of [1, 2, 7]) expect(checkMessage({ ...track(), version }, { strict: true }).errors).toEqual([]);
    for (const version of [0, -1, 1.5, "2"]) expect(checkMessage({ ...track(), version }).errors.map((e) => e.key)).toEqual(["version"]);
    expect(checkMessage({ ...fixture("delete"), version: 1 }, { strict: true }).errors.map((e) => e.key)).toEqual(["version"]);
  });

  it("accepts a null or absent userId beside a non-empty anonymousId, and the reverse", () => {
    const { userId: _userId, ...anonymous } = track();
    expect(checkMessage({ ...anonymous, anonymousId: "anon_1", context: { ip: "1.2.3.4" } }, { strict: true }).errors).toEqual([]);
    expect(checkMessage({ ...anonymous, userId: null, anonymousId: "anon_1" }, { strict: true }).errors).toEqual([]);
    expect(checkMessage({ ...track(), anonymousId: null }, { strict: true }).errors).toEqual([]);
    expect(checkMessage(anonymous).errors).toEqual([{ key: "userId", message: 'missing required key "userId" (or "anonymousId")' }]);
    expect(checkMessage({ ...anonymous, userId: null, anonymousId: null }).errors.map((e) => e.key)).toEqual(["userId"]);
    expect(checkMessage({ ...anonymous, userId: "", anonymousId: "" }).errors[0]?.message).toContain("non-empty");
  });

  it("needs no context sub-object: a server-side screen passes", () => {
    const { context: _context, ...screen } = fixture("screen");
    expect(checkMessage(screen, { strict: true }).errors).toEqual([]);
    expect(checkMessage({ ...screen, context: { library: { name: "analytics-python" } } }, { strict: true }).errors).toEqual([]);
    // Built screens still carry their context (docs/messages.md#built-messages).
    expect(schemaFor("screen").safeParse(screen).success).toBe(false);
  });

  it("knows the real service's common fields; typos stay unknown (errors under strict)", () => {
    const common = {
      messageId: "m1",
      anonymousId: "a1",
      context: {},
      integrations: { All: true },
      receivedAt: "2024-01-01T00:00:01.000Z",
      sentAt: "2024-01-01T00:00:00Z",
      originalTimestamp: "2024-01-01T00:00:00Z",
      channel: "server",
    };
    expect(checkMessage({ ...track(), ...common }, { strict: true }).errors).toEqual([]);
    expect(checkMessage({ ...fixture("page"), ...common, name: "Pricing", category: "Docs" }, { strict: true }).errors).toEqual([]);
    expect(checkMessage({ ...track(), evnt: "x", userID: "u" }, { strict: true }).errors.map((e) => e.key)).toEqual(["evnt", "userID"]);
    expect(checkMessage({ ...track(), messageId: 5 }).errors.map((e) => e.key)).toEqual(["messageId"]);
  });

  it("an incoming call (serve) may leave out what the service fills in", () => {
    expect(checkMessage({ type: "track", userId: "u", event: "E" }, { call: true }).errors).toEqual([]);
    expect(checkMessage({ type: "alias", userId: "u", previousId: "p" }, { call: true }).errors).toEqual([]);
    expect(checkMessage({ type: "track", userId: "u" }, { call: true }).errors).toEqual([{ key: "event", message: 'missing required key "event"' }]);
    expect(checkMessage({ type: "track", userId: "u", event: "E" }).errors.map((e) => e.key)).toEqual(["version", "properties", "timestamp"]);
  });

  it("built screens: the nested context keys (docs/messages.md#built-messages) are checked by schemaFor", () => {
    const screen = fixture("screen");
    const context = screen["context"] as Record<string, Record<string, unknown>>;
    expect(schemaFor("screen").safeParse({ ...screen, context: { ...context, os: { name: "iOS" } } }).success).toBe(false);
    expect(schemaFor("track").safeParse({ ...track(), version: 2 }).success).toBe(false);
    expect(schemaFor("track").safeParse({ ...track(), timestamp: "2012-12-02T00:30:08Z" }).success).toBe(false);
  });

  it.each([
    [null, "(body)"],
    [[1, 2], "(body)"],
    ["text", "(body)"],
    [{ type: "purchase" }, "type"],
    [{ userId: "u" }, "type"],
  ])("rejects %j naming %s", (value, key) => {
    expect(checkMessage(value).errors.map((e) => e.key)).toEqual([key]);
  });

  it("isTimestamp accepts exactly the ms-precision UTC form", () => {
    expect(isTimestamp("2012-12-02T00:30:08.276Z")).toBe(true);
    expect(isTimestamp(new Date(0).toISOString())).toBe(true);
    expect(isTimestamp("2012-12-02T00:30:08.2760Z")).toBe(false);
  });
});

describe("userIdOf", () => {
  it("takes userId, else the alias's User ID, else anonymousId: the first that is a string", () => {
    expect(userIdOf(fixture("track"))).toBe("user_1");
    expect(userIdOf(fixture("alias"))).toBe("user_1");
    expect(userIdOf(fixture("alias-camel"))).toBe("user_1");
    expect(userIdOf({ anonymousId: "anon_1" })).toBe("anon_1");
    expect(userIdOf({ userId: 42, anonymousId: "anon_1" })).toBe("anon_1");
    expect(userIdOf({ type: "track" })).toBeUndefined();
    expect(userIdOf(undefined)).toBeUndefined();
  });
});
