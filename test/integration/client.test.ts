import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { Analytics, BatchDeliveryError, ClosedError, ConfigError, QueueFullError, ValidationError, type FlushEvent } from "../../src/index.js";
import { VirtualClock } from "../../src/util/clock.js";
import { startServer, statuses, type ReceivedRequest, type TestServer } from "../helpers/http-server.js";

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface BatchBody {
  batch: Record<string, unknown>[];
  context: unknown;
  messageId: string;
  sentAt: string;
}
const bodyOf = (request: ReceivedRequest): BatchBody => JSON.parse(request.body.toString("utf8")) as BatchBody;

/** A virtual clock that also notes how long each timer was set for. */
class RecordingClock extends VirtualClock {
  readonly waits: number[] = [];
  override setTimeout(callback: () => void, ms: number): ReturnType<VirtualClock["setTimeout"]> {
    this.waits.push(ms);
    return super.setTimeout(callback, ms);
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(respond?: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const s = await startServer(respond);
  cleanups.push(() => s.close());
  return s;
}

function client(endpoint: string, options: ConstructorParameters<typeof Analytics>[1] = {}): Analytics {
  const analytics = new Analytics("wk_test", { endpoint, log: () => {}, ...options });
  cleanups.push(() => analytics.close());
  return analytics;
}

describe("Analytics against a real server on loopback", () => {
  it("45 calls with flushAt 20 → batches of 20 and 20 at once, 5 after flushAfter (virtual time)", async () => {
    const s = await server();
    const clock = new VirtualClock(Date.parse("2024-05-01T12:00:00.000Z"));
    const analytics = client(s.url, { flushAt: 20, flushAfter: 5_000, clock });
    for (let i = 0; i < 45; i++) analytics.track({ userId: `u${i}`, event: "Clicked", properties: { i } });
    await expect.poll(() => s.requests.length, { message: "two batches" }).toBe(2);
    expect(s.requests.map((r) => bodyOf(r).batch.length)).toEqual([20, 20]);

    await expect.poll(() => analytics.stats().delivered, { message: "the two batches delivered" }).toBe(40);
    await clock.advance(4_999);
    // The interval timer has not fired: firing it takes the 5 off the queue into a request at once.
    expect(analytics.stats()).toMatchObject({ queued: 5, inFlight: 0, delivered: 40 });
    expect(s.requests).toHaveLength(2);

    await clock.advance(1);
    await expect.poll(() => s.requests.length, { message: "the interval batch" }).toBe(3);
    const batches = s.requests.map((r) => bodyOf(r).batch);
    expect(batches[2]).toHaveLength(5);
    // Every call arrived once, in order across batches.
    const seen = batches
      .flat()
      .map((m) => (m.properties as { i: number }).i)
      .sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, i) => i));
    expect(bodyOf(s.requests[2]!).sentAt).toBe("2024-05-01T12:00:05.000Z");
  });

  it("sends the exact request: POST /v1/batch, Basic auth, JSON body of docs/serve-api.md#client-request", async () => {
    const s = await server();
    const clock = new VirtualClock(Date.parse("2024-05-01T12:00:00.000Z"));
    const analytics = client(`${s.url}/collect/`, { clock });
    analytics.track({ userId: "u_1", event: "Order Completed", properties: { revenue: 42 } });
    analytics.identify({ anonymousId: "anon_1", traits: { plan: "pro" }, messageId: "given-id", timestamp: new Date(0) });
    analytics.page({ userId: "u_1", name: "Home", category: "Docs", properties: { path: "/" }, timestamp: "2009-11-10T23:00:00+0000" });
    analytics.group({ userId: "u_1", groupId: "g_1", traits: { name: "Acme" }, integrations: { All: false, Webhooks: true } });
    analytics.alias({ userId: "u_2", previousId: "u_1", context: { ip: "10.0.0.1" } });
    await analytics.flush();

    expect(s.requests).toHaveLength(1);
    const request = s.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.url).toBe("/collect/v1/batch");
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from("wk_test:").toString("base64")}`);
    expect(request.headers.authorization).toBe("Basic d2tfdGVzdDo=");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(Number(request.headers["content-length"])).toBe(request.body.length);

    const body = bodyOf(request);
    expect(Object.keys(body)).toEqual(["batch", "context", "messageId", "sentAt"]);
    expect(body.context).toEqual({ library: { name: "webhook-cli", version } });
    expect(body.messageId).toMatch(UUID);
    expect(body.sentAt).toBe("2024-05-01T12:00:00.000Z");
    const now = "2024-05-01T12:00:00.000Z";
    const [track, identify, page, group, alias] = body.batch;
    expect(track).toEqual({ type: "track", userId: "u_1", event: "Order Completed", properties: { revenue: 42 }, messageId: track!.messageId, timestamp: now });
    expect(track!.messageId).toMatch(UUID);
    expect(identify).toEqual({
      type: "identify",
      anonymousId: "anon_1",
      traits: { plan: "pro" },
      messageId: "given-id",
      timestamp: "1970-01-01T00:00:00.000Z",
    });
    expect(page).toMatchObject({
      type: "page",
      userId: "u_1",
      name: "Home",
      category: "Docs",
      properties: { path: "/" },
      timestamp: "2009-11-10T23:00:00+0000",
    });
    expect(group).toMatchObject({ type: "group", userId: "u_1", groupId: "g_1", traits: { name: "Acme" }, integrations: { All: false, Webhooks: true } });
    expect(alias).toMatchObject({ type: "alias", userId: "u_2", previousId: "u_1", context: { ip: "10.0.0.1" }, timestamp: now });
    expect(new Set(body.batch.map((m) => m.messageId)).size).toBe(5);
  });

  it("flushes by size before 500 KB, without a flush() call or the timer", async () => {
    const s = await server();
    const clock = new VirtualClock(0);
    const analytics = client(s.url, { flushAt: 1000, flushAfter: 60_000, clock });
    const pad = "x".repeat(30_000);
    for (let i = 0; i < 20; i++) analytics.track({ userId: "u", event: "Big", properties: { i, pad } });
    await expect.poll(() => s.requests.length, { message: "the size-triggered batch" }).toBe(1);
    const first = s.requests[0]!;
    expect(first.body.length).toBeLessThanOrEqual(512_000);
    const perMessage = Buffer.byteLength(JSON.stringify(bodyOf(first).batch[0]));
    // It was sent because one more message would have pushed it over the limit.
    expect(first.body.length + 1 + perMessage).toBeGreaterThan(512_000);
    expect(bodyOf(first).batch).toHaveLength(16);
    await analytics.flush();
    // Batches go out concurrently, so they may arrive in either order.
    expect(s.requests.map((r) => bodyOf(r).batch.length).sort((a, b) => b - a)).toEqual([16, 4]);
    expect(s.requests.every((r) => r.body.length <= 512_000)).toBe(true);
  });

  it("rejects a 33 KB message synchronously and sends nothing; exactly 32,768 bytes is accepted", async () => {
    const s = await server();
    const analytics = client(s.url, { flushAt: 1 });
    const big = { userId: "u", event: "Huge", properties: { pad: "x".repeat(33 * 1024) } };
    expect(() => analytics.track(big)).toThrow(ValidationError);
    expect(() => analytics.track(big)).toThrow(/a message must be at most 32 KB \(32768 bytes\)/);
    expect(analytics.stats().queued).toBe(0);

    const base = { userId: "u", event: "Edge", messageId: "m-edge", timestamp: "2024-01-01T00:00:00.000Z", properties: { pad: "" } };
    const size = Buffer.byteLength(JSON.stringify({ type: "track", ...base }));
    const edge = { ...base, properties: { pad: "y".repeat(32_768 - size) } };
    let delivered = false;
    analytics.track(edge, (error) => (delivered = error === undefined));
    await analytics.flush();
    expect(s.requests).toHaveLength(1);
    expect(Buffer.byteLength(JSON.stringify(bodyOf(s.requests[0]!).batch[0]))).toBe(32_768);
    expect(delivered).toBe(true);
  });

  it("retries after 503 with backoff, keeping the batch's messageId; callback once, flush event reports attempts", async () => {
    const s = await server(statuses(503, 503, 200));
    const analytics = client(s.url, { random: () => 0 });
    const flushes: FlushEvent[] = [];
    analytics.on("flush", (event) => flushes.push(event));
    const results: (Error | undefined)[] = [];
    analytics.track({ userId: "u", event: "E" }, (error) => results.push(error));
    await analytics.flush();
    expect(s.requests).toHaveLength(3);
    expect(new Set(s.requests.map((r) => bodyOf(r).messageId)).size).toBe(1);
    expect(results).toEqual([undefined]);
    expect(flushes).toHaveLength(1);
    expect(flushes[0]).toMatchObject({ attempts: 3, status: 200, batchId: bodyOf(s.requests[0]!).messageId });
    expect(analytics.stats()).toMatchObject({ delivered: 1, failed: 0, queued: 0 });
  });

  it("honours Retry-After on 429 (virtual time)", async () => {
    const s = await server((_req, res, index) => {
      res.statusCode = index === 0 ? 429 : 200;
      if (index === 0) res.setHeader("retry-after", "3");
      res.end();
    });
    const clock = new RecordingClock(0);
    const analytics = client(s.url, { clock, random: () => 0 });
    analytics.track({ userId: "u", event: "E" });
    const flushed = analytics.flush();
    await expect.poll(() => s.requests.length, { message: "the first attempt" }).toBe(1);
    await expect.poll(() => clock.waits.includes(3_000), { message: "the retry timer, set to the server's 3 s" }).toBe(true);
    await clock.advance(2_999);
    expect(s.requests).toHaveLength(1);
    expect(analytics.stats()).toMatchObject({ inFlight: 1, delivered: 0 });
    await clock.advance(1);
    await flushed;
    expect(s.requests).toHaveLength(2);
  });

  it("does not retry after 400: the callback and the error event get the failure", async () => {
    const s = await server((_req, res) => {
      res.statusCode = 400;
      res.end(JSON.stringify({ error: "message 0 is invalid" }));
    });
    const analytics = client(s.url);
    const errors: Error[] = [];
    analytics.on("error", (error) => errors.push(error));
    const results: (Error | undefined)[] = [];
    analytics.track({ userId: "u", event: "E" }, (error) => results.push(error));
    analytics.track({ userId: "u", event: "F" }, (error) => results.push(error));
    await analytics.flush();
    expect(s.requests).toHaveLength(1);
    expect(results).toHaveLength(2);
    expect(results[0]).toBeInstanceOf(BatchDeliveryError);
    expect(results[0]).toBe(results[1]);
    const failure = results[0] as BatchDeliveryError;
    expect(failure.status).toBe(400);
    expect(failure.attempts).toBe(1);
    expect(failure.message).toMatch(/HTTP 400: \{"error":"message 0 is invalid"\}/);
    expect(errors).toEqual([failure]);
    expect(analytics.stats()).toMatchObject({ failed: 2, delivered: 0, queued: 0 });
  });

  it("gives up after maxRetries on 5xx; an unheard error is logged, not thrown", async () => {
    const s = await server(statuses(500));
    const lines: string[] = [];
    const analytics = client(s.url, { maxRetries: 2, random: () => 0, log: (line) => lines.push(line) });
    let result: Error | undefined;
    analytics.track({ userId: "u", event: "E" }, (error) => (result = error));
    await analytics.flush();
    expect(s.requests).toHaveLength(3);
    expect((result as BatchDeliveryError).attempts).toBe(3);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^analytics: Failed to send a batch of 1 message\(s\) to http:\/\/127\.0\.0\.1:\d+\/v1\/batch after 3 attempt\(s\): HTTP 500/);
  });

  it("close() drains the queue, is safe to call twice, and later calls throw", async () => {
    const s = await server();
    const analytics = client(s.url, { flushAt: 20, flushAfter: 600_000 });
    let callbacks = 0;
    for (let i = 0; i < 5; i++) analytics.identify({ userId: `u${i}` }, () => callbacks++);
    const first = analytics.close();
    const second = analytics.close();
    expect(second).toBe(first);
    await first;
    await second;
    expect(s.requests).toHaveLength(1);
    expect(bodyOf(s.requests[0]!).batch).toHaveLength(5);
    expect(callbacks).toBe(5);
    expect(() => analytics.track({ userId: "u", event: "late" })).toThrow(ClosedError);
    expect(() => analytics.alias({ userId: "a", previousId: "b" })).toThrow(/after close\(\)/);
    await expect(analytics.flush()).resolves.toBeUndefined();
  });

  it("no unhandled rejection and no throw when the server is down", async () => {
    const down = await startServer();
    const url = down.url;
    await down.close();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const lines: string[] = [];
      const analytics = client(url, { flushAt: 2, maxRetries: 1, random: () => 0, log: (line) => lines.push(line) });
      const results: (Error | undefined)[] = [];
      analytics.track({ userId: "u", event: "A" }, (error) => results.push(error));
      analytics.track({ userId: "u", event: "B" });
      analytics.page({ userId: "u" }, (error) => results.push(error));
      await expect(analytics.flush()).resolves.toBeUndefined();
      await expect(analytics.close()).resolves.toBeUndefined();
      // Node reports unhandled rejections once the microtask queue drains, before the next immediate.
      await new Promise((resolve) => setImmediate(resolve));
      expect(results).toHaveLength(2);
      for (const error of results) expect(error?.message).toMatch(/ECONNREFUSED/);
      expect(lines.length).toBe(2);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("bounds the queue: calls beyond maxQueueSize are dropped with QueueFullError, one error event per episode", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const s = await server(async (_req, res) => {
      await held;
      res.end("ok");
    });
    const analytics = client(s.url, { flushAt: 1, concurrency: 1, maxQueueSize: 5 });
    const errors: Error[] = [];
    analytics.on("error", (error) => errors.push(error));
    const results: (Error | undefined)[] = [];
    for (let i = 0; i < 10; i++) analytics.track({ userId: "u", event: `E${i}` }, (error) => results.push(error));
    expect(analytics.stats()).toMatchObject({ queued: 5, dropped: 5 });
    await expect.poll(() => results.length, { message: "the dropped calls' callbacks" }).toBe(5);
    expect(results.every((error) => error instanceof QueueFullError)).toBe(true);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(QueueFullError);
    release();
    await analytics.flush();
    expect(results.filter((error) => error === undefined)).toHaveLength(5);
    expect(analytics.stats()).toMatchObject({ queued: 0, delivered: 5, dropped: 5 });
    // Room again: new calls are accepted.
    analytics.track({ userId: "u", event: "after" });
    expect(analytics.stats().dropped).toBe(5);
  });

  it("times out a request that gets no answer and retries it", async () => {
    const s = await server((_req, res, index) => {
      if (index > 0) res.end("ok");
      // The first request is left hanging.
    });
    const analytics = client(s.url, { timeout: 200, random: () => 0 });
    let result: Error | undefined | null = null;
    analytics.track({ userId: "u", event: "E" }, (error) => (result = error));
    await analytics.flush();
    expect(s.requests).toHaveLength(2);
    expect(result).toBeUndefined();
  });

  it("debug logs queueing, flushes and failures to its log; silent otherwise (DEBUG=analytics is the default of `debug`)", async () => {
    const s = await server(statuses(503, 200));
    const lines: string[] = [];
    const quiet: string[] = [];
    const loud = client(s.url, { random: () => 0, debug: true, log: (line) => lines.push(line) });
    const silent = client(s.url, { log: (line) => quiet.push(line) });
    loud.track({ userId: "u", event: "E" });
    silent.track({ userId: "u", event: "E" });
    await loud.flush();
    await silent.flush();
    expect(lines.some((l) => /^analytics: queued track /.test(l))).toBe(true);
    expect(lines.some((l) => /^analytics: sending batch .*: 1 messages/.test(l))).toBe(true);
    expect(lines.some((l) => /failed \(HTTP 503\); retrying in 50 ms/.test(l))).toBe(true);
    expect(lines.some((l) => /^analytics: delivered batch .* HTTP 200 after 2 attempt/.test(l))).toBe(true);
    expect(quiet).toEqual([]);
  });

  it("a throwing callback or listener does not break delivery", async () => {
    const s = await server();
    const lines: string[] = [];
    const analytics = client(s.url, { log: (line) => lines.push(line) });
    analytics.on("flush", () => {
      throw new Error("listener bug");
    });
    analytics.track({ userId: "u", event: "E" }, () => {
      throw new Error("callback bug");
    });
    await analytics.flush();
    analytics.track({ userId: "u", event: "F" });
    await analytics.flush();
    expect(s.requests).toHaveLength(2);
    expect(lines).toContain("analytics: a callback threw: callback bug");
    expect(lines).toContain("analytics: a 'flush' listener threw: listener bug");
  });
});

describe("the client for people coming from analytics-node (docs/serve-api.md#client-library)", () => {
  it.each([
    ["host", "endpoint"],
    ["flushInterval", "flushAfter"],
    ["maxEventsInBatch", "flushAt"],
  ])("an unknown option %s is a ConfigError naming it and the right name (%s)", (wrong, right) => {
    let error: unknown;
    try {
      new Analytics("wk", { [wrong]: 1 } as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(`Unknown option '${wrong}': this client calls it '${right}'.`);
    expect((error as ConfigError).source).toEqual({ key: wrong });
  });

  it("an option nobody would guess lists the known ones", () => {
    expect(() => new Analytics("wk", { flushEvery: 3 } as never)).toThrow(/Unknown option 'flushEvery'; known options: endpoint, flushAt, flushAfter/);
  });

  it("numeric ids are sent as strings; screen() sends a screen call", async () => {
    const s = await server();
    const analytics = client(s.url, { flushAt: 3 });
    analytics.identify({ userId: 42, traits: { plan: "pro" } });
    analytics.group({ userId: 42, groupId: 7 });
    analytics.screen({ anonymousId: 1e3, name: "Home", properties: { variant: "b" } });
    await analytics.flush();
    const [identify, group, screen] = bodyOf(s.requests[0]!).batch;
    expect(identify).toMatchObject({ type: "identify", userId: "42" });
    expect(group).toMatchObject({ type: "group", userId: "42", groupId: "7" });
    expect(screen).toMatchObject({ type: "screen", anonymousId: "1000", name: "Home", properties: { variant: "b" } });
    expect(() => analytics.screen({ name: "Home" })).toThrow(ValidationError);
    expect(() => analytics.identify({ userId: { id: 1 } as never })).toThrow("'userId' must be a string or a number");
  });

  it("a batch that would pass 500,000 bytes is split; every body stays at or under it", async () => {
    const s = await server();
    const analytics = client(s.url, { flushAt: 100 });
    const blob = "x".repeat(30_000);
    for (let i = 0; i < 20; i++) analytics.track({ userId: "u", event: "Big", properties: { i, blob } });
    await analytics.flush();
    expect(s.requests.length).toBe(2);
    for (const request of s.requests) expect(request.body.length).toBeLessThanOrEqual(500_000);
    // Batches go out concurrently, so they may arrive in either order.
    expect(s.requests.map((r) => bodyOf(r).batch.length).sort((a, b) => b - a)).toEqual([16, 4]);
  });
});
