import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import twilio from "twilio";
import { describe, expect, it } from "vitest";
import type { Target } from "../../src/config/destination.js";
import { batchRequest } from "../../src/delivery/actions-request.js";
import { DeliveryEngine, type DeliveryOptions, type EngineSettings } from "../../src/delivery/deliver.js";
import { answers, FakeTransport, VirtualClock, type FakeResponder } from "../../src/testing.js";
import { ANY_SCHEME_SECRET, OTHER_SECRET } from "../helpers/scheme-judges.js";

// The engine's signing by scheme in virtual time: a timestamped scheme signs each attempt afresh
// under one message id (docs/schemes.md#timestamps); Standard Webhooks' retry row; each target's
// scheme; the owners' libraries judge the signatures.
const BODY = JSON.stringify({ version: 1, type: "track", userId: "u_1", event: "Signed Up", messageId: "m-1", timestamp: "2024-01-01T00:00:00.000Z" });
const URL_A = "http://a.test/hook";
const SECOND = 1_000;

function setup(settings: Partial<EngineSettings>, respond: FakeResponder, options: Partial<DeliveryOptions> = {}) {
  // Near the real clock: the owners' verifiers hold timestamps to theirs.
  const clock = new VirtualClock(Math.floor(Date.now() / SECOND) * SECOND, { autoAdvance: true });
  const transport = new FakeTransport({ clock, respond });
  const engine = new DeliveryEngine(
    { targets: [{ url: URL_A, headers: {} }], secret: ANY_SCHEME_SECRET, userAgent: "Segment.io/1.0", ...settings },
    { clock, random: () => 1, transport, randomBytes: (n) => Buffer.alloc(n, 7), ...options },
  );
  return { clock, transport, engine };
}

describe("a timestamped scheme's retries: a fresh timestamp each, one message id", () => {
  it("standard: each attempt is signed at its own time under the same webhook-id, and each verifies", async () => {
    const { engine, transport, clock } = setup({ scheme: "standard" }, answers(503, 500, 200));
    const start = clock.now();
    const result = await engine.deliver(BODY, { identity: { seed: "m-1" } });
    expect(result).toMatchObject({ delivered: true, rounds: 3 });
    const sent = transport.requests.map((request) => request.headers);
    expect(new Set(sent.map((headers) => headers["webhook-id"])).size).toBe(1);
    // Waits of 1 s then 2 s (the destination's backoff at random 1): the timestamps follow the clock.
    expect(sent.map((headers) => Number(headers["webhook-timestamp"]) - start / SECOND)).toEqual([0, 1, 3]);
    expect(new Set(sent.map((headers) => headers["webhook-signature"])).size).toBe(3);
    for (const headers of sent) expect(() => new Webhook(ANY_SCHEME_SECRET).verify(BODY, lowerCase(headers))).not.toThrow();
  });

  it("the id comes from what the message was recorded with, else from its messageId (the same every run), else it is new", () => {
    const { engine } = setup({ scheme: "svix" }, answers(200));
    const target: Target = { url: URL_A, headers: {} };
    const idOf = (identity: Parameters<DeliveryEngine["prepare"]>[2]) => engine.prepare(BODY, target, identity).headers["svix-id"];
    expect(idOf({ identity: { id: "msg_recorded", seed: "m-1" } })).toBe("msg_recorded");
    // An id the scheme cannot carry (a dot in an id Standard Webhooks signs) is replaced, not sent.
    expect(idOf({ identity: { id: "msg.with.dots", seed: "m-1" } })).toBe(idOf({ identity: { seed: "m-1" } }));
    expect(idOf({ identity: { seed: "m-1" } })).toBe(idOf({ identity: { seed: "m-1" } }));
    expect(idOf({ identity: { seed: "m-1" } })).not.toBe(idOf({ identity: { seed: "m-2" } }));
    expect(idOf({})).toBe(`msg_${Buffer.alloc(16, 7).toString("base64url")}`);
  });

  it("stripe: a retry over five minutes later still verifies, its t= renewed", async () => {
    const { engine, transport, clock } = setup({ scheme: "stripe" }, answers({ status: 503, retryAfterMs: 400 * SECOND }, 200));
    const start = clock.now() / SECOND;
    await engine.deliver(BODY);
    const parts = transport.requests.map((request) => /t=(\d+)/.exec(request.headers["Stripe-Signature"] ?? "")?.[1]);
    expect(parts.map((t) => Number(t) - start)).toEqual([0, 400]);
    // The retry carries the time it was sent: Stripe's check at that time (its 300 s tolerance) passes.
    const retry = transport.requests[1]?.headers["Stripe-Signature"] as string;
    const at = Number(parts[1]);
    const signedAt = Stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: ANY_SCHEME_SECRET, timestamp: at });
    expect(retry).toBe(signedAt);
  });
});

describe("retryRules: standard (Standard Webhooks' schedule)", () => {
  it("immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h; nothing after", async () => {
    const { engine, transport } = setup({}, answers(500), { retryRules: "standard" });
    const result = await engine.deliver(BODY);
    expect(result.delivered).toBe(false);
    const starts = transport.requests.map((request) => request.at);
    const gaps = starts.slice(1).map((at, i) => (at - (starts[i] as number)) / SECOND);
    expect(gaps).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400]);
  });

  it("410 Gone stops; a 3xx is retried, not followed; Retry-After on any answer replaces the step", async () => {
    const gone = setup({}, answers(410, 200), { retryRules: "standard" });
    expect(await gone.engine.deliver(BODY)).toMatchObject({ delivered: false, rounds: 1 });
    const moved = setup({}, answers({ status: 400, retryAfterMs: 2 * SECOND }, 301, 200), { retryRules: "standard" });
    expect(await moved.engine.deliver(BODY)).toMatchObject({ delivered: true, rounds: 3 });
    const starts = moved.transport.requests.map((request) => request.at);
    expect([(starts[1] as number) - (starts[0] as number), (starts[2] as number) - (starts[1] as number)]).toEqual([2 * SECOND, 300 * SECOND]);
  });

  it("an attempt has 15 s unless a timeout is given", async () => {
    const { engine, transport } = setup({}, answers("hang", 200), { retryRules: "standard" });
    await engine.deliver(BODY);
    expect((transport.requests[1]?.at ?? 0) - (transport.requests[0]?.at ?? 0)).toBe(15 * SECOND + 5 * SECOND);
  });
});

describe("schemes per target, and under Webhooks (Actions)", () => {
  it("each target signs by its own scheme; Twilio signs each target's own URL", async () => {
    const targets: Target[] = [
      { url: "http://a.test/sms", headers: {}, scheme: "twilio" },
      { url: "http://b.test/sms?x=1", headers: {}, scheme: "twilio" },
      { url: "http://c.test/hook", headers: {} },
    ];
    const { engine, transport } = setup({ targets, secrets: [ANY_SCHEME_SECRET, OTHER_SECRET], scheme: "github" }, answers(200));
    await engine.deliver(BODY);
    const [a, b, c] = transport.requests;
    for (const sent of [a, b]) {
      expect(sent?.url).toMatch(/[?&]bodySHA256=[0-9a-f]{64}$/);
      expect(twilio.validateRequestWithBody(ANY_SCHEME_SECRET, sent?.headers["X-Twilio-Signature"] as string, sent?.url as string, BODY)).toBe(true);
    }
    expect(a?.headers["X-Twilio-Signature"]).not.toBe(b?.headers["X-Twilio-Signature"]);
    expect(c?.headers["X-Hub-Signature-256"]).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it("two targets of one scheme: one message id in every attempt to each, new or derived from the seed", async () => {
    const targets: Target[] = [
      { url: "http://a.test/hook", headers: {} },
      { url: "http://b.test/hook", headers: {} },
    ];
    // Each draw of random bytes differs: a second id drawn for the message would show.
    let draws = 0;
    const randomBytes = (n: number) => Buffer.alloc(n, ++draws);
    for (const call of [{}, { identity: { seed: "m-1" } }]) {
      const { engine, transport } = setup({ targets, scheme: "standard" }, answers(500, 503, 200), { randomBytes });
      expect(await engine.deliver(BODY, call)).toMatchObject({ delivered: true, rounds: 3 });
      const idsTo = (url: string) => transport.requests.filter((request) => request.url === url).map((request) => request.headers["webhook-id"]);
      const [a, b] = [idsTo("http://a.test/hook"), idsTo("http://b.test/hook")];
      expect([a.length, b.length]).toEqual([3, 3]);
      expect(new Set([...a, ...b]).size).toBe(1);
      for (const sent of transport.requests) expect(() => new Webhook(ANY_SCHEME_SECRET).verify(BODY, lowerCase(sent.headers))).not.toThrow();
    }
  });

  it("a Webhooks (Actions) batch under another scheme than X-Signature is signed over the whole body", async () => {
    const target: Target = { url: URL_A, headers: {}, batchSize: 2 };
    const { engine, transport } = setup({ targets: [target], destination: "actions", scheme: "standard" }, answers(200));
    const { content } = batchRequest(target, [{ body: BODY }, { body: BODY.replace("u_1", "u_2") }]);
    await engine.deliverContent(target, content as NonNullable<typeof content>);
    const [sent] = transport.requests;
    expect(sent?.body.startsWith("[")).toBe(true);
    expect(() => new Webhook(ANY_SCHEME_SECRET).verify(sent?.body as string, lowerCase(sent?.headers ?? {}))).not.toThrow();
  });

  it("a secret a scheme in use cannot take fails when the engine is built, before anything is sent", () => {
    expect(() => setup({ secret: "not base64!", targets: [{ url: URL_A, headers: {}, scheme: "svix" }] }, answers(200))).toThrow(/not a svix secret/);
  });
});

function lowerCase(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
