import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Target } from "../../src/config/destination.js";
import { batchRequest } from "../../src/delivery/actions-request.js";
import { DeliveryEngine, type DeliveryOptions } from "../../src/delivery/deliver.js";
import { parseMapping } from "../../src/messages/mapping.js";
import { answers, byUrl, FakeTransport, VirtualClock, type FakeResponder } from "../../src/testing.js";

const SECRET = "s3cr3t";
const MESSAGE = { type: "track", userId: "u_1", event: "Order Completed", properties: { sku: "sku-1", price: 9.5 }, timestamp: "2024-01-01T00:00:00.000Z" };
const BODY = JSON.stringify(MESSAGE);
const A = "http://a.test/hook";
const B = "http://b.test/hook";
const hmac = (bytes: string) => createHmac("sha1", SECRET).update(bytes).digest("hex");

function setup(respond: FakeResponder, targets: Target[] = [{ url: A, headers: {} }], options: Partial<DeliveryOptions> = {}, secret: string | null = SECRET) {
  const clock = new VirtualClock(1_000_000, { autoAdvance: true });
  const transport = new FakeTransport({ clock, respond });
  const engine = new DeliveryEngine(
    { targets, secret: secret ?? undefined, userAgent: "Segment (Actions)", destination: "actions" },
    { clock, random: () => 1, transport, ...options },
  );
  return { clock, transport, engine };
}

describe("the engine in Webhooks (Actions) mode: the actions row of the retry rules (virtual time)", () => {
  it("retries 423 (and 408, 429, 5xx), where classic gives up on a 423", async () => {
    const { engine, transport } = setup(answers(423, 408, 429, 503, 200));
    const result = await engine.deliver(BODY);
    expect(result).toMatchObject({ delivered: true, rounds: 5 });
    expect(transport.requests).toHaveLength(5);

    const clock = new VirtualClock(0, { autoAdvance: true });
    const classicTransport = new FakeTransport({ clock, respond: answers(423, 200) });
    const classic = new DeliveryEngine({ targets: [{ url: A, headers: {} }], secret: undefined, userAgent: "x" }, { clock, transport: classicTransport });
    expect((await classic.deliver(BODY)).delivered).toBe(false);
    expect(classicTransport.requests).toHaveLength(1);
  });

  it("does not retry 501 (classic does), nor another 4xx", async () => {
    for (const status of [501, 400, 404, 410]) {
      const { engine, transport } = setup(answers(status, 200));
      const result = await engine.deliver(BODY);
      expect(result, String(status)).toMatchObject({ delivered: false, rounds: 1 });
      expect(result.urls[0]).toMatchObject({ status, attempts: 1, error: `HTTP ${status}` });
      expect(transport.requests).toHaveLength(1);
    }
  });

  it("waits 10 s for an answer by default (classic: 5 s), then retries on the same schedule", async () => {
    const { engine, transport } = setup(answers("hang", 200));
    const result = await engine.deliver(BODY);
    expect(result).toMatchObject({ delivered: true, rounds: 2 });
    expect(result.urls[0]?.ms).toBe(10_000);
    const [first, second] = transport.requests;
    // The 10 s deadline, then the first retry's wait (random 1 × 1 s).
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBe(11_000);
  });

  it("several URLs are independent subscriptions: each gets the message and retries on its own; delivered only when every one is", async () => {
    const { engine, transport } = setup(byUrl({ [A]: answers({ status: 500, latencyMs: 300 }, 500, 200), [B]: answers(503, 200) }), [
      { url: A, headers: {} },
      { url: B, headers: {} },
    ]);
    const result = await engine.deliver(BODY);
    expect(result).toMatchObject({ delivered: true, rounds: 3 });
    const atA = transport.requests.filter((r) => r.url === A).map((r) => r.at - 1_000_000);
    const atB = transport.requests.filter((r) => r.url === B).map((r) => r.at - 1_000_000);
    // B's retry does not wait for A's slow answer (classic retries the URLs of a round together).
    expect(atB).toEqual([0, 1000]);
    expect(atA).toEqual([0, 1300, 3300]);
    expect(result.urls.map((u) => [u.url, u.status, u.attempts])).toEqual([
      [A, 200, 3],
      [B, 200, 2],
    ]);
  });

  it("one URL failing for good does not stop the others, and the message is not delivered (any-of is classic's rule)", async () => {
    const { engine, transport } = setup(byUrl({ [A]: answers(404), [B]: answers(503, 200) }), [
      { url: A, headers: {} },
      { url: B, headers: {} },
    ]);
    const result = await engine.deliver(BODY);
    expect(result.delivered).toBe(false);
    expect(result.urls).toMatchObject([
      { url: A, status: 404, attempts: 1 },
      { url: B, status: 200, attempts: 2 },
    ]);
    expect(transport.requests.filter((r) => r.url === B)).toHaveLength(2);
  });

  it("each URL maps the message by its own data mapping and sends with its own method; X-Signature covers that body", async () => {
    const { engine, transport } = setup(answers(200), [
      { url: A, headers: {} },
      {
        url: B,
        headers: { "X-Env": "ci" },
        method: "PATCH",
        mapping: parseMapping('{"sku": {"@path": "$.properties.sku"}, "source": "shop"}', { flag: "--data" }),
      },
    ]);
    expect((await engine.deliver(BODY)).delivered).toBe(true);
    const [a, b] = transport.requests;
    expect(a?.body).toBe(BODY);
    expect(a?.headers).toEqual({ "User-Agent": "Segment (Actions)", "Content-Type": "application/json", "X-Signature": hmac(BODY) });
    expect(b?.body).toBe('{"sku":"sku-1","source":"shop"}');
    expect(b?.headers["X-Signature"]).toBe(hmac('{"sku":"sku-1","source":"shop"}'));
    expect(b?.headers["X-Env"]).toBe("ci");
    const sent = await captureMethods(engine);
    expect(sent).toEqual(["POST", "PATCH"]);
  });

  it("a @path that finds nothing is left out; data that is nothing sends no body, no Content-Type, no X-Signature", async () => {
    const mapped = parseMapping('{"email": {"@path": "$.traits.email"}}', { flag: "--data" });
    const nothing = parseMapping("$.traits.email", { flag: "--data" });
    const { engine, transport } = setup(answers(200), [
      { url: A, headers: {}, mapping: mapped },
      { url: B, headers: {}, method: "PUT", mapping: nothing },
    ]);
    expect((await engine.deliver(BODY)).delivered).toBe(true);
    const [a, b] = transport.requests;
    expect(a?.body).toBe("{}");
    expect(a?.headers["X-Signature"]).toBe(hmac("{}"));
    expect(b?.body).toBe("");
    expect(b?.headers).toEqual({ "User-Agent": "Segment (Actions)" });
  });

  it("the whole-message mapping re-serializes the message, unless the caller says the bytes already are JSON.stringify of it", async () => {
    const { engine, transport } = setup(answers(200));
    const pretty = JSON.stringify(MESSAGE, null, 1);
    await engine.deliver(pretty);
    await engine.deliver(BODY, { canonical: true });
    expect(transport.requests.map((r) => r.body)).toEqual([BODY, BODY]);
  });

  it("no secret, no X-Signature", async () => {
    const { engine, transport } = setup(answers(200), undefined, {}, null);
    await engine.deliver(BODY);
    expect(transport.requests[0]?.headers).toEqual({ "User-Agent": "Segment (Actions)", "Content-Type": "application/json" });
  });

  it("data that is not an object is refused for that URL before anything is sent (the real destination answers 400)", async () => {
    const { engine, transport } = setup(answers(200), [
      { url: A, headers: {}, mapping: parseMapping("$.event", { flag: "--data" }) },
      { url: B, headers: {} },
    ]);
    const result = await engine.deliver(BODY);
    expect(result.delivered).toBe(false);
    expect(result.urls[0]).toMatchObject({
      url: A,
      status: null,
      attempts: 0,
      error: expect.stringMatching(/^not sent: Data must be an object but it was a string/),
    });
    expect(result.urls[1]).toMatchObject({ url: B, status: 200 });
    expect(transport.requests.map((r) => r.url)).toEqual([B]);
  });
});

describe("a batch through the engine", () => {
  const events = ["u_1", "u_2", "u_3"].map((userId, i) => ({ body: JSON.stringify({ ...MESSAGE, userId, messageId: `m${i}` }), canonical: true }));

  it("is one request, retried whole, signed over JSON.stringify of its first element only", async () => {
    const target: Target = { url: A, headers: {}, method: "PUT", batchSize: 10 };
    const { engine, transport } = setup(answers(503, 423, 200), [target]);
    const { content, refused } = batchRequest(target, events);
    expect(refused.size).toBe(0);
    const result = await engine.deliverContent(target, content!);
    expect(result).toMatchObject({ delivered: true, rounds: 3, urls: [{ url: A, status: 200, attempts: 3 }] });
    const bodies = new Set(transport.requests.map((r) => r.body));
    expect([...bodies]).toEqual([`[${events.map((e) => e.body).join(",")}]`]);
    for (const request of transport.requests) {
      expect(request.headers["X-Signature"]).toBe(hmac(events[0]!.body));
      expect(request.headers["X-Signature"]).not.toBe(hmac(request.body));
    }
  });

  it("leaves out the events whose data is refused, writes null for those without data, and signs nothing when the first is null", () => {
    const mapping = parseMapping('{"@path": "$.properties.coupon"}', { flag: "--data" });
    const target: Target = { url: A, headers: {}, mapping };
    const withCoupon = (coupon: unknown) => ({ body: JSON.stringify({ ...MESSAGE, properties: { coupon } }) });
    const { content, refused } = batchRequest(target, [withCoupon(undefined), withCoupon("SPRING"), withCoupon({ code: "X" })]);
    expect([...refused.keys()]).toEqual([1]);
    expect(refused.get(1)).toMatch(/Data must be an object but it was a string/);
    expect(content?.body?.toString()).toBe('[null,{"code":"X"}]');
    expect(content?.signed).toBeUndefined();
    const none = batchRequest(target, [withCoupon("a"), withCoupon("b")]);
    expect(none.content).toBeUndefined();
    expect(none.refused.size).toBe(2);
  });
});

describe("a recorded request sent again as it was", () => {
  it("keeps its method and bytes and is signed by its rule, in either destination", async () => {
    const batch = '[ {"a":1},{"b":2} ]';
    for (const destination of ["classic", "actions"] as const) {
      const clock = new VirtualClock(0, { autoAdvance: true });
      const transport = new FakeTransport({ clock });
      const engine = new DeliveryEngine({ targets: [{ url: A, headers: {} }], secret: SECRET, userAgent: "ua", destination }, { clock, transport });
      await engine.deliver(batch, { recorded: { method: "PATCH", rule: "first-element" } });
      await engine.deliver(batch, { recorded: { method: "PUT", rule: "body" } });
      await engine.deliver("", { recorded: { method: "POST", rule: "body" } });
      const [first, whole, empty] = transport.requests;
      expect(first?.body).toBe(batch);
      expect(first?.headers["X-Signature"]).toBe(hmac('{"a":1}'));
      expect(whole?.headers["X-Signature"]).toBe(hmac(batch));
      expect(empty?.headers).toEqual({ "User-Agent": "ua" });
      expect(engine.prepare(batch, { url: A, headers: {} }, { recorded: { method: "PATCH", rule: "first-element" } }).method).toBe("PATCH");
    }
  });
});

/** The methods of the requests the engine prepares for the message, in target order. */
async function captureMethods(engine: DeliveryEngine): Promise<string[]> {
  const methods: string[] = [];
  await engine.deliver(BODY, { onAttempt: (event) => methods.push(event.request.method) });
  return methods;
}
