import { describe, expect, it } from "vitest";
import { checkMessage } from "../../src/messages/check.js";
import type { IngestCall } from "../../src/serve/ingest.js";
import { deleteMessage, toMessage } from "../../src/serve/transform.js";

const receivedAt = new Date("2024-05-01T12:00:00.000Z");
const base = { aliasKeys: "spec" as const, receivedAt, ip: "10.1.2.3" };

describe("toMessage (docs/serve-api.md#from-call-to-message)", () => {
  it("track: exact keys in docs/messages.md#message-types order, context kept with ip added, server time when no timestamp", () => {
    const call: IngestCall = { type: "track", userId: "u1", event: "Signed Up", properties: { plan: "pro" }, context: { locale: "en" } };
    const message = toMessage(call, base);
    expect(JSON.stringify(message)).toBe(
      JSON.stringify({
        version: 1,
        type: "track",
        userId: "u1",
        event: "Signed Up",
        properties: { plan: "pro" },
        timestamp: "2024-05-01T12:00:00.000Z",
        context: { locale: "en", ip: "10.1.2.3" },
        receivedAt: "2024-05-01T12:00:00.000Z",
      }),
    );
    expect(checkMessage(message, { strict: true }).errors).toEqual([]);
  });

  it("keeps a given timestamp (already normalized at ingest) and a client-supplied context.ip", () => {
    const message = toMessage({ type: "identify", userId: "u1", timestamp: "2009-11-10T23:00:00.000Z", context: { ip: "1.1.1.1" } }, base);
    expect(message).toEqual({
      version: 1,
      type: "identify",
      userId: "u1",
      traits: {},
      timestamp: "2009-11-10T23:00:00.000Z",
      context: { ip: "1.1.1.1" },
      receivedAt: receivedAt.toISOString(),
    });
  });

  it("uses anonymousId in userId's place when there is no userId", () => {
    const message = toMessage({ type: "page", anonymousId: "anon-1", properties: { path: "/" } }, base);
    expect(message).toMatchObject({ type: "page", anonymousId: "anon-1", properties: { path: "/" } });
    expect(message).not.toHaveProperty("userId");
    expect(checkMessage(message, { strict: true }).errors).toEqual([]);
  });

  it("alias keys follow settings.aliasKeys", () => {
    const call: IngestCall = { type: "alias", userId: "new", previousId: "old" };
    const times = { timestamp: receivedAt.toISOString(), context: { ip: "10.1.2.3" }, receivedAt: receivedAt.toISOString() };
    expect(toMessage(call, base)).toEqual({ version: 1, type: "alias", "Previous ID": "old", "User ID": "new", ...times });
    expect(toMessage(call, { ...base, aliasKeys: "camel" })).toEqual({ version: 1, type: "alias", previousId: "old", userId: "new", ...times });
  });

  it("group and screen shapes", () => {
    expect(Object.keys(toMessage({ type: "group", userId: "u", groupId: "g", traits: { n: 1 } }, base))).toEqual([
      "version",
      "type",
      "groupId",
      "userId",
      "traits",
      "timestamp",
      "context",
      "receivedAt",
    ]);
    const context = { device: { model: "m", type: "ios" }, os: { name: "iOS", version: "17" }, app: { build: "1", name: "a", version: "1.0" } };
    const screen = toMessage({ type: "screen", userId: "u", name: "Home", context }, base);
    expect(screen).toEqual({
      version: 1,
      type: "screen",
      userId: "u",
      name: "Home",
      timestamp: receivedAt.toISOString(),
      context: { ...context, ip: "10.1.2.3" },
      receivedAt: receivedAt.toISOString(),
    });
    expect(checkMessage(screen, { strict: true }).errors).toEqual([]);
    // A server-side screen: no device context, properties kept, still passes listen --strict.
    const serverSide = toMessage({ type: "screen", anonymousId: "a", name: "Home", properties: { variant: "b" } }, { aliasKeys: "spec", receivedAt });
    expect(checkMessage(serverSide, { strict: true }).errors).toEqual([]);
  });

  it("forwards the whole message: messageId, anonymousId beside userId, integrations, receivedAt, sentAt, page name/category", () => {
    const call: IngestCall = {
      type: "page",
      userId: "u",
      anonymousId: "a",
      name: "Pricing",
      category: "Docs",
      messageId: "m-1",
      integrations: { All: true },
      properties: { path: "/pricing" },
      timestamp: "2024-05-01T11:59:59.000Z",
      sentAt: "2024-05-01T11:59:59.500Z",
    };
    const message = toMessage(call, base) as unknown as Record<string, unknown>;
    expect(message).toMatchObject({
      userId: "u",
      anonymousId: "a",
      name: "Pricing",
      category: "Docs",
      messageId: "m-1",
      integrations: { All: true },
      receivedAt: receivedAt.toISOString(),
      sentAt: call.sentAt,
      originalTimestamp: call.timestamp,
    });
    expect(checkMessage(message, { strict: true }).errors).toEqual([]);
  });

  it("corrects clock skew when the request has sentAt (docs/serve-api.md#timestamps-and-clock-skew): a client an hour fast", () => {
    const hour = 3_600_000;
    const fast = (ms: number): string => new Date(ms + hour).toISOString();
    const happened = receivedAt.getTime() - 2_000;
    const call: IngestCall = { type: "track", userId: "u", event: "E", timestamp: fast(happened), sentAt: fast(receivedAt.getTime() - 50) };
    const message = toMessage(call, base) as unknown as Record<string, unknown>;
    expect(message["timestamp"]).toBe(new Date(happened + 50).toISOString());
    expect(message["originalTimestamp"]).toBe(call.timestamp);
    // Historical imports stay in the past; without sentAt the timestamp is kept as given.
    const old = toMessage({ type: "track", userId: "u", event: "E", timestamp: "2020-01-01T00:00:00.000Z" }, base) as unknown as Record<string, unknown>;
    expect(old["timestamp"]).toBe("2020-01-01T00:00:00.000Z");
    expect(old).not.toHaveProperty("originalTimestamp");
  });

  it("no context and no ip: no context key", () => {
    expect(toMessage({ type: "identify", userId: "u" }, { aliasKeys: "spec", receivedAt })).not.toHaveProperty("context");
  });

  it("delete messages have type, userId, timestamp only", () => {
    expect(deleteMessage("u1", receivedAt)).toEqual({ type: "delete", userId: "u1", timestamp: "2024-05-01T12:00:00.000Z" });
  });
});
