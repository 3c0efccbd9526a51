import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import type { DestinationSettings } from "../../src/config/destination.js";
import { Collector } from "../../src/serve/collector.js";
import { allowedOrigins, type AllowedOrigins } from "../../src/serve/cors.js";
import { MemoryQueue } from "../../src/serve/queue/memory-queue.js";
import { listenCollector, type ServeServerOptions } from "../../src/serve/server.js";
import { VirtualClock } from "../../src/util/clock.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { generateCertificates } from "../helpers/tls.js";

/**
 * serve in process, fed the requests the official clients send (each from its
 * own source): the browser's short paths and preflights, the mobile clients'
 * gzip batches, Python's gzip=True, the limits and answers of the real API.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const KEY = "wk_web";
const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString("base64")}`;
const library = (name: string, version = "1.0.0") => ({ library: { name, version } });

async function setup(options: Partial<ServeServerOptions> & { origins?: string[] } = {}) {
  const receiver: TestServer = await startServer();
  cleanups.push(() => receiver.close());
  const settings: DestinationSettings = {
    targets: [{ url: `${receiver.url}/hook`, headers: {} }],
    secret: "s3cret",
    secrets: ["s3cret"],
    userAgent: "Segment.io/1.0",
    aliasKeys: "spec",
    enabled: true,
    sources: [{ name: "web", writeKey: KEY }],
  };
  const unauthorized: { path: string; client: string }[] = [];
  const collector = new Collector({ settings, queue: new MemoryQueue(), concurrency: 4, onUnauthorized: (refusal) => unauthorized.push(refusal) });
  collector.start();
  const allowed: AllowedOrigins | undefined = options.origins ? (allowedOrigins(options.origins) as { ok: true; allowed: AllowedOrigins }).allowed : undefined;
  const server = await listenCollector(collector, { host: "127.0.0.1", port: 0, ...options, ...(allowed ? { allowedOrigins: allowed } : {}) });
  cleanups.push(async () => {
    await server.close();
    await collector.close();
  });
  const delivered = () => receiver.requests.map((r) => JSON.parse(r.body.toString("utf8")) as Record<string, unknown>);
  return { receiver, collector, server, unauthorized, delivered };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown>;
}

/** One request with exact headers and body pieces (chunked when no Content-Length is given). */
function send(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string | number>; body?: Buffer | string | Buffer[]; ca?: string },
): Promise<Answer> {
  const target = new URL(options.path, url);
  const make = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = make(target, { method: options.method ?? "POST", headers: options.headers ?? {}, ...(options.ca ? { ca: options.ca } : {}) }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on("error", reject);
    const pieces = options.body === undefined ? [] : Array.isArray(options.body) ? options.body : [options.body];
    for (const piece of pieces) req.write(piece);
    req.end();
  });
}

const kotlinBatch = (messageIds: string[]) => ({
  batch: messageIds.map((messageId) => ({
    type: "track",
    event: "Song Played",
    userId: "u1",
    messageId,
    timestamp: "2024-05-01T10:00:00.000Z",
    context: library("analytics-kotlin", "1.25.0"),
  })),
  sentAt: "2024-05-01T10:00:01.000Z",
  writeKey: KEY,
});

describe("the browser's paths and CORS", () => {
  it("takes the six short paths as the six calls, each answer readable by the page", async () => {
    const s = await setup();
    const origin = "http://127.0.0.1:5173";
    const calls: [string, Record<string, unknown>][] = [
      ["/v1/i", { type: "identify", userId: "u1", traits: { plan: "pro" } }],
      ["/v1/t", { type: "track", userId: "u1", event: "Clicked" }],
      ["/v1/p", { type: "page", userId: "u1", name: "Home" }],
      ["/v1/s", { type: "screen", userId: "u1", name: "Main" }],
      ["/v1/g", { type: "group", userId: "u1", groupId: "g1" }],
      ["/v1/a", { type: "alias", userId: "u1", previousId: "anon" }],
    ];
    for (const [path, call] of calls) {
      const answer = await send(s.server.url, {
        path,
        headers: { "Content-Type": "text/plain", Origin: origin, Authorization: basic(KEY) },
        body: JSON.stringify({ ...call, writeKey: KEY, messageId: `m${path}`, context: library("analytics.js", "next-1.84.3") }),
      });
      expect(answer.status, path).toBe(200);
      expect(answer.headers["access-control-allow-origin"], path).toBe(origin);
    }
    await expect.poll(() => s.collector.counts().delivered).toBeGreaterThanOrEqual(6);
    expect(s.delivered().map((m) => m["type"])).toEqual(["identify", "track", "page", "screen", "group", "alias"]);
    const health = (await send(s.server.url, { method: "GET", path: "/health" })).json;
    expect(health["routes"]).toEqual({ "/v1/i": 1, "/v1/t": 1, "/v1/p": 1, "/v1/s": 1, "/v1/g": 1, "/v1/a": 1 });
    expect(health["libraries"]).toEqual({ "analytics.js": 6 });
  });

  it("answers the preflight of every ingest and settings path: origin, methods, the requested headers, a max age", async () => {
    const s = await setup();
    for (const [path, methods] of [
      ["/v1/t", "POST"],
      ["/v1/b", "POST"],
      ["/v1/m", "POST"],
      [`/v1/projects/${KEY}/settings`, "GET, HEAD"],
    ]) {
      const answer = await send(s.server.url, {
        method: "OPTIONS",
        path: path as string,
        headers: {
          Origin: "http://localhost:3000",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "content-type,authorization,x-retry-count",
        },
      });
      expect(answer.status, path).toBe(204);
      expect(answer.headers["access-control-allow-origin"]).toBe("http://localhost:3000");
      expect(answer.headers["access-control-allow-methods"]).toBe(methods);
      expect(answer.headers["access-control-allow-headers"]).toBe("content-type, authorization, x-retry-count");
      expect(answer.headers["access-control-max-age"]).toBe("7200");
    }
  });

  it("puts Access-Control-Allow-Origin on errors too: 401, 400, 404, 405, 415", async () => {
    const s = await setup();
    const origin = "http://localhost:3000";
    const answers = [
      await send(s.server.url, { path: "/v1/t", headers: { Origin: origin, Authorization: basic("wrong") }, body: '{"userId":"u","event":"E"}' }),
      await send(s.server.url, { path: "/v1/t", headers: { Origin: origin, Authorization: basic(KEY) }, body: "{not json" }),
      await send(s.server.url, { path: "/v1/nope", headers: { Origin: origin }, body: "{}" }),
      await send(s.server.url, { method: "GET", path: "/v1/t", headers: { Origin: origin } }),
      await send(s.server.url, { path: "/v1/t", headers: { Origin: origin, "Content-Encoding": "br" }, body: "x" }),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 400, 404, 405, 415]);
    for (const answer of answers) expect(answer.headers["access-control-allow-origin"]).toBe(origin);
    expect(answers[3]?.headers["allow"]).toBe("POST, OPTIONS");
  });

  it("--allow-origin narrows it: another page is refused (403, no allow) and nothing is queued", async () => {
    const s = await setup({ origins: ["http://localhost:3000"] });
    const allowed = await send(s.server.url, {
      path: "/v1/t",
      headers: { Origin: "http://localhost:3000", Authorization: basic(KEY) },
      body: '{"userId":"u","event":"E"}',
    });
    expect(allowed.status).toBe(200);
    const other = await send(s.server.url, {
      path: "/v1/t",
      headers: { Origin: "https://evil.example", Authorization: basic(KEY) },
      body: '{"userId":"u","event":"E"}',
    });
    expect(other.status).toBe(403);
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
    expect(other.json).toMatchObject({ success: false, code: "forbidden" });
    const preflight = await send(s.server.url, {
      method: "OPTIONS",
      path: "/v1/t",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(403);
    expect(s.collector.counts().accepted).toBe(1);
  });

  it("bound to loopback, answers only loopback names in Host (DNS rebinding), and nothing is queued", async () => {
    const s = await setup();
    const rebound = await send(s.server.url, {
      path: "/v1/t",
      headers: { Host: `attacker.example:${s.server.port}`, "Content-Type": "text/plain" },
      body: JSON.stringify({ userId: "u", event: "E", writeKey: KEY }),
    });
    expect(rebound.status).toBe(403);
    expect(rebound.json["message"]).toContain("Host: attacker.example");
    const local = await send(s.server.url, {
      path: "/v1/t",
      headers: { Host: `localhost:${s.server.port}` },
      body: JSON.stringify({ userId: "u", event: "E", writeKey: KEY }),
    });
    expect(local.status).toBe(200);
    expect(s.collector.counts().accepted).toBe(1);
  });

  it("answers /v1/m with 200, discards it and counts it; serves the settings stand-in pointing at itself", async () => {
    const s = await setup();
    const metrics = await send(s.server.url, { path: "/v1/m", headers: { "Content-Type": "text/plain" }, body: '{"series":[]}' });
    expect(metrics).toMatchObject({ status: 200, json: { success: true } });
    const settings = await send(s.server.url, { method: "GET", path: `/v1/projects/${KEY}/settings`, headers: { Host: `localhost:${s.server.port}` } });
    expect(settings.json).toEqual({
      integrations: { "Segment.io": { apiKey: KEY, apiHost: `localhost:${s.server.port}/v1`, protocol: "http" } },
      metrics: { sampleRate: 0, host: `localhost:${s.server.port}/v1` },
    });
    const health = (await send(s.server.url, { method: "GET", path: "/health" })).json;
    expect(health["routes"]).toEqual({ "/v1/m": 1, "/v1/projects/{writeKey}/settings": 1 });
    expect(health["accepted"]).toBe(0);
  });
});

describe("compressed bodies", () => {
  it("analytics-kotlin's upload: text/plain, gzip, /v1/b, writeKey in the body, chunked with no Content-Length", async () => {
    const s = await setup();
    const packed = gzipSync(JSON.stringify(kotlinBatch(["k1", "k2"])));
    const answer = await send(s.server.url, {
      path: "/v1/b",
      headers: { "Content-Type": "text/plain", "Content-Encoding": "gzip", "User-Agent": "analytics-kotlin/1.25.0" },
      body: [packed.subarray(0, 1), packed.subarray(1, 9), packed.subarray(9, 40), packed.subarray(40)],
    });
    expect(answer).toMatchObject({ status: 200, json: { success: true } });
    await expect.poll(() => s.collector.counts().delivered).toBeGreaterThanOrEqual(2);
    expect(s.delivered().map((m) => m["messageId"])).toEqual(["k1", "k2"]);
    expect((await send(s.server.url, { method: "GET", path: "/health" })).json["libraries"]).toEqual({ "analytics-kotlin": 1 });
  });

  it("analytics-python with gzip=True: JSON, gzip, Content-Length, Basic auth; and a deflate body", async () => {
    const s = await setup();
    const body = {
      batch: [{ type: "identify", userId: "p1", messageId: "p1", context: library("analytics-python", "2.3.3") }],
      sentAt: "2024-05-01T10:00:00.000Z",
    };
    const packed = gzipSync(JSON.stringify(body));
    const headers = { "Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": packed.length, Authorization: basic(KEY) };
    expect((await send(s.server.url, { path: "/v1/batch", headers, body: packed })).status).toBe(200);
    const deflated = deflateSync(JSON.stringify({ ...body, batch: [{ ...body.batch[0], messageId: "p2" }] }));
    expect(
      (
        await send(s.server.url, {
          path: "/v1/batch",
          headers: { ...headers, "Content-Encoding": "deflate", "Content-Length": deflated.length },
          body: deflated,
        })
      ).status,
    ).toBe(200);
    await expect.poll(() => s.collector.counts().delivered).toBeGreaterThanOrEqual(2);
    expect(s.delivered().map((m) => m["messageId"])).toEqual(["p1", "p2"]);
  });

  // What the bombs cost serve's memory is measured in its own process: test/e2e/inflate-memory.test.ts.
  it("a gzip bomb (a few KB inflating far past 500 KB) is a 400 request_too_large, nothing queued", async () => {
    const s = await setup();
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, " "));
    expect(bomb.length).toBeLessThan(128 * 1024);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => send(s.server.url, { path: "/v1/b", headers: { "Content-Encoding": "gzip", "Content-Type": "text/plain" }, body: bomb })),
    );
    for (const answer of answers) expect(answer.json).toMatchObject({ success: false, code: "request_too_large" });
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(400));
    expect(s.collector.counts().accepted).toBe(0);
  });

  it("a corrupt stream is a 400 with zlib's reason; an unknown coding a 415 naming it", async () => {
    const s = await setup();
    const corrupt = await send(s.server.url, { path: "/v1/b", headers: { "Content-Encoding": "gzip" }, body: Buffer.from("this is not gzip at all") });
    expect(corrupt).toMatchObject({ status: 400, json: { success: false, code: "invalid_request" } });
    expect(corrupt.json["message"]).toMatch(/^request body is not valid gzip data \(Content-Encoding: gzip\): incorrect header check$/);
    const truncated = gzipSync(JSON.stringify(kotlinBatch(["t1"]))).subarray(0, 30);
    const cut = await send(s.server.url, { path: "/v1/b", headers: { "Content-Encoding": "gzip" }, body: truncated });
    expect(cut.status).toBe(400);
    expect(cut.json["message"]).toContain("unexpected end of file");
    const unknown = await send(s.server.url, { path: "/v1/b", headers: { "Content-Encoding": "br" }, body: "x" });
    expect(unknown).toMatchObject({ status: 415, json: { success: false, code: "unsupported_encoding" } });
    expect(unknown.json["message"]).toContain('"br"');
    expect(s.collector.counts().accepted).toBe(0);
  });
});

describe("limits and answers as the real API's", () => {
  it("a call over 32 KB makes the request a 400 request_too_large naming the limit; nothing of it is queued", async () => {
    const s = await setup();
    const body = {
      batch: [
        { type: "track", userId: "u", event: "E" },
        { type: "track", userId: "u", event: "E", properties: { pad: "x".repeat(33_000) } },
      ],
    };
    const answer = await send(s.server.url, { path: "/v1/batch", headers: { Authorization: basic(KEY) }, body: JSON.stringify(body) });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ success: false, code: "request_too_large" });
    expect(answer.json["message"]).toMatch(/^batch\[1\]: a call is over the 32 KB limit \(\d+ > 32768 bytes\)$/);
    expect(s.collector.counts()).toMatchObject({ accepted: 0, rejected: 0 });
  });

  it("a batch of more than 2,500 calls is answered 200: the first 2,500 are queued, the rest dropped and counted rejected", async () => {
    const s = await setup();
    const batch = Array.from({ length: 2_510 }, (_, i) => ({ type: "track", userId: "u", event: "E", messageId: `m${i}` }));
    const answer = await send(s.server.url, { path: "/v1/batch", headers: { Authorization: basic(KEY) }, body: JSON.stringify({ batch }) });
    expect(answer).toMatchObject({ status: 200, json: { success: true } });
    expect(s.collector.counts()).toMatchObject({ accepted: 2_500, rejected: 10 });
  });

  it("a wrong write key stays 401, and /health and the log name the client that sent it", async () => {
    const s = await setup();
    const body = JSON.stringify({ batch: [{ type: "track", userId: "u", event: "E", context: library("analytics-python", "2.3.3") }] });
    expect((await send(s.server.url, { path: "/v1/batch", headers: { Authorization: basic("wk_wrong") }, body })).status).toBe(401);
    const noLibrary = await send(s.server.url, {
      path: "/v1/track",
      headers: { "User-Agent": "analytics-go (version: 3.3.0)" },
      body: '{"userId":"u","event":"E","writeKey":"nope"}',
    });
    expect(noLibrary.json).toEqual({ success: false, message: "invalid write key", code: "unauthorized" });
    expect(s.unauthorized).toEqual([
      { path: "/v1/batch", client: "analytics-python 2.3.3", message: "invalid write key" },
      { path: "/v1/track", client: "analytics-go (version: 3.3.0)", message: "invalid write key" },
    ]);
    const health = (await send(s.server.url, { method: "GET", path: "/health" })).json;
    expect(health["unauthorized"]).toEqual({ "analytics-python 2.3.3": 1, "analytics-go (version: 3.3.0)": 1 });
  });

  it("a 503 carries Retry-After: bodies over the memory budget", async () => {
    const s = await setup({ bodyBudgetBytes: 1024 });
    const big = JSON.stringify({
      batch: Array.from({ length: 400 }, () => ({ type: "track", userId: "u", event: "E", properties: { pad: "y".repeat(200) } })),
    });
    const answer = await send(s.server.url, { path: "/v1/batch", headers: { Authorization: basic(KEY) }, body: big });
    expect(answer.status).toBe(503);
    expect(answer.headers["retry-after"]).toBe("2");
  });
});

describe("bursts wait their turn", () => {
  it("past the requests handled at once a request waits, unread, and is taken when one finishes; past the longest wait it gets 503 with Retry-After", async () => {
    // The wait for a turn runs on this clock: the 300 ms pass when the test says so.
    const clock = new VirtualClock(Date.now());
    const s = await setup({ requestsAtOnce: 1, maxWaitMs: 300, clock });
    const { connect } = await import("node:net");
    // The first request holds the only turn: its body is still coming.
    const holder = connect(s.server.port, "127.0.0.1");
    await new Promise((resolve) => holder.once("connect", resolve));
    const body = '{"userId":"u","event":"E"}';
    holder.write(`POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic(KEY)}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    // Counted as it arrives, then given its turn in the same step.
    await expect.poll(() => s.collector.counts().routes["/v1/track"]).toBe(1);
    const waiting = send(s.server.url, { path: "/v1/track", headers: { Authorization: basic(KEY) }, body });
    // It waits: its wait is the clock's one timer, which has not fired 1 ms short of the longest wait.
    await expect.poll(() => clock.pending).toBe(1);
    await clock.advance(299);
    expect(clock.pending).toBe(1);
    await clock.advance(1);
    const waited = await waiting;
    expect(waited.status).toBe(503);
    expect(waited.headers["retry-after"]).toBe("2");
    // A waiting request is taken as soon as the turn frees.
    const next = send(s.server.url, { path: "/v1/track", headers: { Authorization: basic(KEY) }, body });
    await expect.poll(() => clock.pending).toBe(1);
    holder.write(body.slice(5));
    expect((await next).status).toBe(200);
    holder.destroy();
    expect(s.collector.counts().accepted).toBe(2);
  });
});

describe("serve over TLS", () => {
  const certs = generateCertificates();

  it("is reached by a client that trusts the CA; a client that does not gets a TLS error at once, not a hang", async () => {
    const s = await setup({ tls: { cert: certs.cert, key: certs.key } });
    expect(s.server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const trusted = await send(s.server.url, {
      path: "/v1/b",
      headers: { "Content-Type": "text/plain", "Content-Encoding": "gzip" },
      body: gzipSync(JSON.stringify(kotlinBatch(["tls1"]))),
      ca: certs.caCert,
    });
    expect(trusted.status).toBe(200);
    const settings = await send(s.server.url, { method: "GET", path: `/v1/projects/${KEY}/settings`, ca: certs.caCert });
    expect(settings.json["integrations"]).toMatchObject({ "Segment.io": { protocol: "https" } });
    const refused = await send(s.server.url, { path: "/v1/b", body: "{}" }).then(
      () => "answered",
      (error: NodeJS.ErrnoException) => error.code,
    );
    // The handshake's own verdict: a connection left hanging would end in another error, or in the test's timeout.
    expect(refused).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    await expect.poll(() => s.collector.counts().delivered).toBeGreaterThanOrEqual(1);
  });
});
