import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { Analytics as Client } from "../../src/client/analytics.js";
import { Analytics, ClosedError, ConfigError, ValidationError } from "../../src/index.js";
import {
  MISSING_EVENT,
  MISSING_GROUP_ID,
  MISSING_IDENTITY,
  MISSING_PREVIOUS_ID,
  MISSING_USER_ID,
  checkMessageSize,
  validateCall,
} from "../../src/client/validate.js";

// Nothing is sent in these tests: the port is never reached because no batch is flushed.
const client = () => new Analytics("wk", { endpoint: "http://127.0.0.1:9", flushAt: 1000, flushAfter: 3_600_000, log: () => {} });

function thrown(fn: () => void): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("client validation messages (docs/serve-api.md#client-validation)", () => {
  it("has the original library's exact wording", () => {
    expect(MISSING_IDENTITY).toBe("You must pass either an 'anonymousId' or 'userId'.");
    expect(MISSING_EVENT).toBe("You must pass 'event'.");
    expect(MISSING_GROUP_ID).toBe("You must pass a 'groupId'.");
    expect(MISSING_USER_ID).toBe("You must pass a 'userId'.");
    expect(MISSING_PREVIOUS_ID).toBe("You must pass a 'previousId'.");
  });

  const cases: [string, (a: Analytics) => void, string][] = [
    ["identify without ids", (a) => a.identify({}), MISSING_IDENTITY],
    ["page without ids", (a) => a.page({ name: "Home" }), MISSING_IDENTITY],
    ["track without anything: event first", (a) => a.track({} as never), MISSING_EVENT],
    ["track with event, without ids", (a) => a.track({ event: "Signed Up" }), MISSING_IDENTITY],
    ["track with ids, empty event", (a) => a.track({ event: "", userId: "u" }), MISSING_EVENT],
    ["group without anything: groupId first", (a) => a.group({} as never), MISSING_GROUP_ID],
    ["group with groupId, without ids", (a) => a.group({ groupId: "g" }), MISSING_IDENTITY],
    ["group with empty ids", (a) => a.group({ groupId: "g", userId: "", anonymousId: "" }), MISSING_IDENTITY],
    ["alias without anything: userId first", (a) => a.alias({} as never), MISSING_USER_ID],
    ["alias with previousId only", (a) => a.alias({ previousId: "p" } as never), MISSING_USER_ID],
    ["alias with userId only", (a) => a.alias({ userId: "u" } as never), MISSING_PREVIOUS_ID],
    ["alias with empty previousId", (a) => a.alias({ userId: "u", previousId: "" }), MISSING_PREVIOUS_ID],
  ];
  for (const [name, call, message] of cases) {
    it(`${name} → ${message}`, () => {
      const error = thrown(() => call(client()));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).code).toBe("E_VALIDATION");
      expect(error.message).toBe(message);
    });
  }

  it("accepts anonymousId in place of userId, and alias without anonymousId", () => {
    const a = client();
    expect(() => a.identify({ anonymousId: "anon" })).not.toThrow();
    expect(() => a.track({ event: "E", anonymousId: "anon" })).not.toThrow();
    expect(() => a.page({ userId: "u" })).not.toThrow();
    expect(() => a.group({ groupId: "g", anonymousId: "anon" })).not.toThrow();
    expect(() => a.alias({ userId: "u", previousId: "p" })).not.toThrow();
    expect(a.stats().queued).toBe(5);
  });

  it("rejects wrongly typed fields after the required checks, naming the key", () => {
    expect(() => validateCall("track", { event: 42, userId: "u" })).toThrow("'event' must be a string, got number 42.");
    expect(() => validateCall("identify", { userId: "u", traits: [] })).toThrow("'traits' must be an object, got an array.");
    expect(() => validateCall("page", { userId: "u", timestamp: "yesterday" })).toThrow(/'timestamp' must be a valid Date/);
    expect(() => validateCall("page", { userId: "u", timestamp: new Date(Number.NaN) })).toThrow(/an invalid Date/);
    expect(() => validateCall("identify", null)).toThrow("You must pass a message object to identify().");
    // Required checks come first even when another field is also wrong.
    expect(() => validateCall("track", { traits: 5 })).toThrow(MISSING_EVENT);
  });

  it("rejects a message over 32 KB with the size in the message, accepts exactly 32 KB", () => {
    expect(() => checkMessageSize("track", 32_768)).not.toThrow();
    expect(() => checkMessageSize("track", 32_769)).toThrow("Your track message is 32769 bytes of JSON; a message must be at most 32 KB (32768 bytes).");
  });

  it("rejects unserializable messages and non-function callbacks", () => {
    const a = client();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => a.track({ event: "E", userId: "u", properties: circular })).toThrow(/cannot be serialized to JSON/);
    expect(() => a.track({ event: "E", userId: "u" }, "nope" as never)).toThrow(ValidationError);
    expect(a.stats().queued).toBe(0);
  });

  it("checks the write key and options, naming the option", () => {
    expect(() => new Analytics("")).toThrow(ConfigError);
    expect(() => new Analytics("wk", { flushAt: 0 })).toThrow("flushAt must be a whole number ≥ 1, got 0");
    expect(() => new Analytics("wk", { flushAfter: -5 })).toThrow(/flushAfter must be a number > 0/);
    expect(() => new Analytics("wk", { maxRetries: 1.5 })).toThrow(/maxRetries/);
    expect(() => new Analytics("wk", { endpoint: "ftp://x" })).toThrow(/endpoint must be an http: or https: URL/);
    expect(() => new Analytics("wk", { endpoint: "not a url" })).toThrow(/endpoint is not a URL/);
    expect(() => new Analytics("wk", { clock: {} as never })).toThrow("clock must have now(), setTimeout() and clearTimeout(), got an object");
    expect(() => new Analytics("wk", { random: 0.5 as never })).toThrow("random must be a function, got number 0.5");
    expect(() => new Analytics("wk", "fast" as never)).toThrow('options must be an object, got "fast"');
    // null reads as no options, as it did before the defaults moved into the class.
    expect(new Analytics("wk", null as never).stats().queued).toBe(0);
  });

  it("is one class: the package's Analytics is the client itself, with its defaults as parameters", () => {
    expect(Analytics).toBe(Client);
    expect(Object.getPrototypeOf(Analytics)).toBe(EventEmitter);
  });

  it("throws ClosedError for calls after close()", async () => {
    const a = client();
    await a.close();
    const error = thrown(() => a.identify({ userId: "u" }));
    expect(error).toBeInstanceOf(ClosedError);
    expect(error.message).toMatch(/after close\(\)/);
  });
});
