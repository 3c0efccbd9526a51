import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Collector } from "../../src/serve/collector.js";
import { openSqliteQueue } from "../../src/serve/queue/durable-queue.js";
import { MemoryQueue } from "../../src/serve/queue/memory-queue.js";
import type { MessageQueue } from "../../src/serve/queue/message-queue.js";
import { listenCollector, type ServeServer } from "../../src/serve/server.js";
import type { DestinationSettings } from "../../src/config/destination.js";
import { verify } from "../../src/signing/x-signature.js";
import { startServer, statuses, type Responder, type TestServer } from "../helpers/http-server.js";
import { sendRaw } from "../helpers/hostile-requests.js";
import { slowUpload, trickle } from "../helpers/slow-upload.js";

const SECRET = "s3cret";
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Rejected = Parameters<NonNullable<ConstructorParameters<typeof Collector>[0]["onRejected"]>>[0];

interface Setup {
  rejected: Rejected[];
  receiver: TestServer;
  collector: Collector;
  server: ServeServer;
  queue: MessageQueue;
  post(path: string, body: unknown, key?: string | null): Promise<{ status: number; json: Record<string, unknown> }>;
  health(): Promise<Record<string, number>>;
}

async function setup(
  options: { respond?: Responder; settings?: Partial<DestinationSettings>; sqlite?: boolean; strict?: boolean; bodyBudgetBytes?: number } = {},
): Promise<Setup> {
  const receiver = await startServer(options.respond);
  cleanups.push(() => receiver.close());
  let queue: MessageQueue = new MemoryQueue();
  if (options.sqlite) {
    const dir = mkdtempSync(join(tmpdir(), "webhook-cli-serve-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    queue = await openSqliteQueue(dir);
  }
  const settings: DestinationSettings = {
    targets: [{ url: `${receiver.url}/hook`, headers: { "X-Env": "ci" } }],
    secret: SECRET,
    secrets: [SECRET],
    userAgent: "Segment.io/1.0",
    aliasKeys: "spec",
    enabled: true,
    sources: [{ name: "web", writeKey: "wk_web" }],
    ...options.settings,
  };
  const rejected: Rejected[] = [];
  const collector = new Collector({
    settings,
    queue,
    delivery: { timeoutMs: 2_000, retryWindowMs: 3_000 },
    concurrency: 4,
    strict: options.strict ?? false,
    onRejected: (rejection) => rejected.push(rejection),
  });
  collector.start();
  const server = await listenCollector(collector, {
    host: "127.0.0.1",
    port: 0,
    ...(options.bodyBudgetBytes ? { bodyBudgetBytes: options.bodyBudgetBytes } : {}),
  });
  cleanups.push(async () => {
    await server.close();
    await collector.close();
  });
  return {
    rejected,
    receiver,
    collector,
    server,
    queue,
    async post(path, body, key = "wk_web") {
      const headers: Record<string, string> = { "Content-Type": "application/json" };
      if (key !== null) headers["Authorization"] = `Basic ${Buffer.from(`${key}:`).toString("base64")}`;
      const response = await fetch(`${server.url}${path}`, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    },
    async health() {
      return (await (await fetch(`${server.url}/health`)).json()) as Record<string, number>;
    },
  };
}

const bodies = (receiver: TestServer) => receiver.requests.map((r) => JSON.parse(r.body.toString("utf8")) as Record<string, unknown>);

describe("serve: ingest → queue → THE delivery engine", () => {
  it("routes request-targets that are paths only: absolute-form or `*@host/…` targets are no endpoint (404), nothing queued", async () => {
    const s = await setup();
    const body = JSON.stringify({ batch: [{ type: "track", userId: "u1", event: "Signed Up" }] });
    const basic = Buffer.from("wk_web:").toString("base64");
    for (const target of [`http://127.0.0.1:${s.receiver.port}/v1/batch`, `*@127.0.0.1:${s.receiver.port}/v1/batch`, "*"]) {
      const request = `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${basic}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      expect(await sendRaw(s.server.port, Buffer.from(request)), target).toMatch(/^HTTP\/1\.1 404 Not Found\r\n[\s\S]*"code":"not_found"/);
    }
    expect(await s.health()).toMatchObject({ accepted: 0 });
    expect(s.receiver.requests).toHaveLength(0);
  });

  it("forwards batch and single calls of all types as signed messages of the exact shapes", async () => {
    const s = await setup({ sqlite: true });
    const batch = await s.post("/v1/batch", {
      batch: [
        { type: "identify", userId: "u1", traits: { plan: "pro" }, timestamp: "2009-11-10T23:00:00+0000", messageId: "m1" },
        { type: "track", userId: "u1", event: "Signed Up", properties: { n: 1 }, messageId: "m2" },
        { type: "page", anonymousId: "a1", properties: { path: "/p" }, messageId: "m3" },
      ],
      context: { library: { name: "analytics-node", version: "1" } },
      sentAt: new Date().toISOString(),
    });
    expect(batch).toEqual({ status: 200, json: { success: true } });
    expect((await s.post("/v1/group", { userId: "u1", groupId: "g1", traits: { size: 3 } })).status).toBe(200);
    expect((await s.post("/v1/alias", { userId: "u2", previousId: "u1", writeKey: "wk_web" }, null)).status).toBe(200);
    await expect.poll(() => s.receiver.requests.length).toBe(5);

    for (const request of s.receiver.requests) {
      expect(request.url).toBe("/hook");
      expect(request.headers["content-type"]).toBe("application/json");
      expect(request.headers["user-agent"]).toBe("Segment.io/1.0");
      expect(request.headers["x-env"]).toBe("ci");
      expect(verify(SECRET, request.body, String(request.headers["x-signature"]))).toBe(true);
    }
    const messages = bodies(s.receiver).sort((a, b) => String(a["type"]).localeCompare(String(b["type"])));
    const library = { name: "analytics-node", version: "1" };
    expect(messages.map((m) => Object.keys(m))).toEqual([
      ["version", "type", "Previous ID", "User ID", "timestamp", "context", "messageId", "receivedAt"],
      ["version", "type", "groupId", "userId", "traits", "timestamp", "context", "messageId", "receivedAt"],
      ["version", "type", "userId", "traits", "timestamp", "originalTimestamp", "context", "messageId", "receivedAt", "sentAt"],
      ["version", "type", "anonymousId", "properties", "timestamp", "context", "messageId", "receivedAt", "sentAt"],
      ["version", "type", "userId", "event", "properties", "timestamp", "context", "messageId", "receivedAt", "sentAt"],
    ]);
    // Historical import with sentAt: the client's timestamp is kept as originalTimestamp, timestamp stays in 2009.
    expect(messages[2]).toMatchObject({
      version: 1,
      type: "identify",
      userId: "u1",
      traits: { plan: "pro" },
      originalTimestamp: "2009-11-10T23:00:00.000Z",
      messageId: "m1",
      context: { library, ip: "127.0.0.1" },
    });
    expect(String(messages[2]!["timestamp"])).toMatch(/^2009-11-10T23:00:0\d\.\d{3}Z$/);
    expect(String(messages[0]!["messageId"])).toMatch(/^api-[0-9a-f-]{36}$/);
    expect(messages[0]).toMatchObject({ "Previous ID": "u1", "User ID": "u2", context: { ip: "127.0.0.1" } });
    expect(String(messages[4]!["timestamp"])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await expect.poll(() => s.queue.pendingCount()).toBe(0);
    expect(await s.health()).toMatchObject({ accepted: 5, filtered: 0, delivered: 5, failed: 0, pending: 0 });
  });

  it("routes by integrations: All:false blocks, All:false + Webhooks:true passes, Webhooks:false blocks", async () => {
    const s = await setup();
    const result = await s.post("/v1/batch", {
      batch: [
        { type: "track", userId: "blocked", event: "E", integrations: { All: false } },
        { type: "track", userId: "passes", event: "E", integrations: { All: false, Webhooks: true } },
        { type: "track", userId: "off", event: "E", integrations: { Webhooks: false } },
        { type: "track", userId: "case", event: "E", integrations: { All: false, webhooks: true } },
        { type: "track", userId: "default", event: "E" },
      ],
    });
    expect(result.status).toBe(200);
    await expect.poll(() => s.collector.counts().delivered).toBe(2);
    // Nothing is left to deliver, so no other request can come.
    expect(await s.health()).toMatchObject({ accepted: 5, filtered: 3, delivered: 2, pending: 0 });
    expect(
      bodies(s.receiver)
        .map((m) => m["userId"])
        .sort(),
    ).toEqual(["default", "passes"]);
  });

  it("refuses wrong or missing keys with 401 and bad bodies with 400, queueing nothing and staying up", async () => {
    const s = await setup();
    expect(await s.post("/v1/track", { userId: "u", event: "E" }, "wrong")).toEqual({
      status: 401,
      json: { success: false, message: "invalid write key", code: "unauthorized" },
    });
    expect((await s.post("/v1/track", { userId: "u", event: "E", writeKey: "wrong" }, null)).status).toBe(401);
    expect(await s.post("/v1/track", { userId: "u", event: "E" }, null)).toEqual({
      status: 401,
      json: { success: false, message: "missing write key", code: "unauthorized" },
    });

    const malformed = await s.post("/v1/batch", '{"batch": [', "wk_web");
    expect(malformed.status).toBe(400);
    expect(malformed.json).toMatchObject({ success: false, code: "invalid_request" });
    expect(malformed.json["message"]).toContain("not valid JSON");

    const many = Array.from({ length: 20 }, () => ({ type: "track", userId: "u", event: "E", properties: { x: "y".repeat(30_000) } }));
    const bigRequest = await s.post("/v1/batch", { batch: many });
    expect(bigRequest.status).toBe(400);
    expect(bigRequest.json).toMatchObject({ success: false, code: "request_too_large" });
    expect(bigRequest.json["message"]).toContain("500 KB limit");

    // Declared over the limit: answered at once, before the body arrives (the sender reads it, no reset).
    const declared = await slowUpload(s.server.url, "/v1/batch", 600_000, { Authorization: `Basic ${Buffer.from("wk_web:").toString("base64")}` });
    await declared.ended;
    expect(declared.received()).toMatch(/^HTTP\/1\.1 400 [\s\S]*"code":"request_too_large"/);
    declared.socket.end();
    expect((await declared.closed).reset).toBe(false);

    expect((await s.post("/v1/nothing", {})).status).toBe(404);
    expect((await fetch(`${s.server.url}/v1/batch`)).status).toBe(405);
    // Nothing was queued, so nothing can be delivered later.
    expect(await s.health()).toMatchObject({ status: "ok", accepted: 0, pending: 0 });
    expect(s.receiver.requests).toHaveLength(0);
  });

  it("past the body budget a large upload gets 503 at once, while small requests still pass", async () => {
    const s = await setup({ bodyBudgetBytes: 200_000 });
    const auth = { Authorization: `Basic ${Buffer.from("wk_web:").toString("base64")}` };
    const first = await slowUpload(s.server.url, "/v1/batch", 300_000, auth);
    await trickle(first.socket, 150_000, 3, 10);
    const second = await slowUpload(s.server.url, "/v1/batch", 300_000, auth);
    await trickle(second.socket, 100_000, 2, 10);
    await expect.poll(() => second.received()).not.toBe("");
    expect(second.received()).toMatch(/^HTTP\/1\.1 503 [\s\S]*"code":"unavailable"/);
    expect(first.received()).toBe("");
    expect((await s.post("/v1/track", { userId: "u", event: "E" })).status).toBe(200);
    first.socket.destroy();
    second.socket.destroy();
  });

  it("a switched-off destination accepts and counts calls but forwards nothing", async () => {
    const s = await setup({ settings: { enabled: false } });
    expect(
      (
        await s.post("/v1/batch", {
          batch: [
            { type: "identify", userId: "u" },
            { type: "track", userId: "u", event: "E" },
          ],
        })
      ).status,
    ).toBe(200);
    expect((await s.post("/v1/delete", { userId: "u" })).status).toBe(200);
    // Nothing was queued, so nothing can be delivered later.
    expect(await s.health()).toMatchObject({ accepted: 3, filtered: 3, delivered: 0, pending: 0 });
    expect(s.receiver.requests).toHaveLength(0);
  });

  it("a deletion forwards one delete per configured source that has seen the user", async () => {
    const s = await setup({
      settings: {
        sources: [
          { name: "web", writeKey: "wk_web" },
          { name: "ios", writeKey: "wk_ios" },
        ],
      },
    });
    await s.post("/v1/identify", { userId: "both" }, "wk_web");
    await s.post("/v1/track", { userId: "both", event: "E", integrations: { All: false } }, "wk_ios");
    await s.post("/v1/identify", { userId: "webonly" }, "wk_web");
    await expect.poll(() => s.receiver.requests.length).toBe(2);

    expect(await s.post("/v1/delete", { userId: "both" }, "wk_web")).toEqual({ status: 200, json: { success: true, sources: ["ios", "web"] } });
    expect(await s.post("/v1/delete", { userId: "webonly" }, "wk_ios")).toEqual({ status: 200, json: { success: true, sources: ["web"] } });
    expect(await s.post("/v1/delete", { userId: "stranger" })).toEqual({ status: 200, json: { success: true, sources: [] } });
    expect((await s.post("/v1/delete", {})).status).toBe(400);
    await expect.poll(() => s.receiver.requests.length).toBe(5);
    const deletes = bodies(s.receiver).filter((m) => m["type"] === "delete");
    expect(deletes.map((m) => m["userId"]).sort()).toEqual(["both", "both", "webonly"]);
    for (const message of deletes) expect(Object.keys(message)).toEqual(["type", "userId", "timestamp"]);
  });

  it("retries 5xx through the engine and moves permanent failures to the failed table", async () => {
    const s = await setup({
      sqlite: true,
      respond: (request, res) => {
        const message = JSON.parse(request.body.toString()) as { userId: string };
        const seen = s.receiver.requests.filter((r) => r.body.equals(request.body)).length;
        res.statusCode = message.userId === "bad" ? 400 : seen === 1 ? 503 : 200;
        res.end();
      },
    });
    await s.post("/v1/batch", {
      batch: [
        { type: "identify", userId: "flaky" },
        { type: "identify", userId: "bad" },
      ],
    });
    await expect.poll(() => s.collector.counts().delivered + s.collector.counts().failed).toBe(2);
    expect(s.collector.counts()).toMatchObject({ delivered: 1, failed: 1, pending: 0 });
    const failed = s.queue.listFailed();
    expect(failed).toHaveLength(1);
    expect(JSON.parse(failed[0]!.body)).toMatchObject({ userId: "bad" });
    expect(failed[0]!.failure).toMatchObject({ status: 400, attempts: 1 });
    expect(s.receiver.requests.filter((r) => JSON.parse(r.body.toString()).userId === "flaky")).toHaveLength(2);
  });

  it("counts retrying deliveries in /health while the receiver answers 503", async () => {
    const s = await setup({ respond: statuses(503) });
    await s.post("/v1/identify", { userId: "u" });
    await expect.poll(() => s.receiver.requests.length).toBeGreaterThanOrEqual(1);
    await expect.poll(() => s.collector.counts().retrying).toBe(1);
    expect(await s.health()).toMatchObject({ accepted: 1, retrying: 1, delivered: 0, pending: 1 });
  });
});

describe("serve answers like the real Tracking API (docs/serve-api.md#answers)", () => {
  const HOUR = 3_600_000;
  /** One batch of valid and invalid calls, as a client an hour fast sends it. */
  function mixedBatch(): Record<string, unknown> {
    const fast = (ms: number): string => new Date(ms + HOUR).toISOString();
    const now = Date.now();
    return {
      batch: [
        {
          type: "track",
          userId: null,
          anonymousId: "anon-1",
          event: "Viewed",
          properties: {},
          messageId: "m-ok-1",
          integrations: { All: true },
          timestamp: fast(now - 1_000),
        },
        { type: "track", userId: "u1", properties: {}, messageId: "m-bad-1" },
        { type: "identify", userId: "u1", anonymousId: "anon-1", traits: { plan: "pro" }, messageId: "m-ok-2", timestamp: fast(now - 500) },
        { type: "page", messageId: "m-bad-2", properties: { path: "/" } },
        { type: "screen", version: 2, userId: "u1", name: "Home", messageId: "m-ok-3", timestamp: fast(now - 200) },
        { type: "track", userId: "u1", event: "E", timestamp: "last tuesday", messageId: "m-bad-3" },
      ],
      context: { library: { name: "analytics-node", version: "6.0.0" } },
      sentAt: fast(now),
    };
  }

  it("drops invalid calls one by one (logged with index and reason, counted), queues the valid ones with the whole message", async () => {
    const s = await setup();
    expect(await s.post("/v1/batch", mixedBatch())).toEqual({ status: 200, json: { success: true } });
    expect(s.rejected.map((r) => [r.index, r.where])).toEqual([
      [1, "batch[1]"],
      [3, "batch[3]"],
      [5, "batch[5]"],
    ]);
    expect(s.rejected[0]!.reason).toBe('missing required key "event"');
    expect(s.rejected[1]!.reason).toContain('"userId" (or "anonymousId")');
    expect(s.rejected[2]!.reason).toContain("last tuesday");
    await expect.poll(() => s.receiver.requests.length).toBe(3);
    const arrived = bodies(s.receiver).sort((a, b) => String(a["messageId"]).localeCompare(String(b["messageId"])));
    expect(arrived.map((m) => m["messageId"])).toEqual(["m-ok-1", "m-ok-2", "m-ok-3"]);
    for (const message of arrived) {
      for (const key of ["messageId", "receivedAt", "sentAt", "originalTimestamp", "context"]) expect(message, key).toHaveProperty(key);
      // The hour is corrected: timestamp = receivedAt − (sentAt − originalTimestamp), so it lands before receivedAt, not an hour after.
      const skew = Date.parse(String(message["receivedAt"])) - Date.parse(String(message["timestamp"]));
      expect(skew).toBeGreaterThanOrEqual(0);
      expect(skew).toBeLessThan(2_000);
      expect(Date.parse(String(message["originalTimestamp"])) - Date.parse(String(message["timestamp"]))).toBeGreaterThan(HOUR - 5_000);
    }
    expect(arrived[0]).toMatchObject({ anonymousId: "anon-1", integrations: { All: true } });
    expect(arrived[0]).not.toHaveProperty("userId");
    expect(arrived[1]).toMatchObject({ userId: "u1", anonymousId: "anon-1" });
    expect(await s.health()).toMatchObject({ accepted: 3, rejected: 3 });
  });

  it("--strict: the same batch is refused with 400 naming the first bad index, and nothing arrives", async () => {
    const s = await setup({ strict: true });
    const result = await s.post("/v1/batch", mixedBatch());
    expect(result).toEqual({ status: 400, json: { success: false, message: 'batch[1]: missing required key "event"', code: "invalid_request", index: 1 } });
    const big = await s.post("/v1/batch", {
      batch: [
        { type: "track", userId: "u", event: "E" },
        { type: "track", userId: "u", event: "E", properties: { x: "y".repeat(33_000) } },
      ],
    });
    expect(big.status).toBe(400);
    expect(big.json["message"]).toContain("32 KB limit");
    expect(await s.health()).toMatchObject({ accepted: 0, rejected: 0, pending: 0 });
    // A valid call afterwards: once it is delivered and nothing is pending, anything the refused batches had queued would have arrived too.
    expect((await s.post("/v1/track", { userId: "after", event: "Sentinel" })).status).toBe(200);
    await expect.poll(() => s.collector.counts()).toMatchObject({ delivered: 1, pending: 0 });
    expect(await s.health()).toMatchObject({ accepted: 1, delivered: 1, pending: 0 });
    expect(s.receiver.requests.map((r) => JSON.parse(r.body.toString()).userId)).toEqual(["after"]);
    expect(s.rejected).toEqual([]);
  });

  it("a single invalid call gets 200 and is rejected (the real API hides it), 400 under --strict", async () => {
    const loose = await setup();
    expect((await loose.post("/v1/track", { userId: "u" })).status).toBe(200);
    expect(loose.rejected.map((r) => r.where)).toEqual(["/v1/track"]);
    const strict = await setup({ strict: true });
    expect(await strict.post("/v1/track", { userId: "u" })).toMatchObject({ status: 400, json: { success: false, code: "invalid_request" } });
  });
});
