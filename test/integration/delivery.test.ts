import { createHmac } from "node:crypto";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryEngine } from "../../src/delivery/deliver.js";
import type { AttemptEvent } from "../../src/delivery/types.js";
import { undiciEngine, type UndiciEngineOptions } from "../../src/delivery/undici-engine.js";
import { UndiciTransport } from "../../src/delivery/undici-transport.js";
import { seededRandom, VirtualClock } from "../../src/util/clock.js";
import { startServer, statuses, type TestServer } from "../helpers/http-server.js";
import { httpsServersClosedAfterAll } from "../helpers/https-server.js";
import { generateCertificates, type TestCertificates } from "../helpers/tls.js";

const BODY = JSON.stringify({
  version: 1,
  type: "track",
  userId: "u_1",
  event: "Signed Up",
  properties: { plan: "ünïcode ✓" },
  timestamp: "2024-01-01T00:00:00.000Z",
});

const servers: TestServer[] = [];
const engines: DeliveryEngine[] = [];
async function server(respond?: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const s = await startServer(respond);
  servers.push(s);
  return s;
}
function engine(urls: string[], options: UndiciEngineOptions = {}, secret?: string): DeliveryEngine {
  const e = undiciEngine(
    { targets: urls.map((url) => ({ url, headers: {} })), secret, userAgent: "Segment.io/1.0" },
    // Virtual time for retry waits unless a test needs real time.
    { clock: new VirtualClock(Date.now(), { autoAdvance: true }), random: seededRandom(1), timeoutMs: 2000, ...options },
  );
  engines.push(e);
  return e;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe("DeliveryEngine over the undici transport, against a real server", () => {
  it("sends the headers of docs/delivery.md#the-forwarded-request and a signature an independent HMAC accepts", async () => {
    const s = await server();
    const e = undiciEngine({
      targets: [{ url: `${s.url}/hooks/a?x=1`, headers: { "X-Env": "ci", "X-Team": "growth" } }],
      secret: "s3cret",
      userAgent: "Segment.io/1.0",
    });
    engines.push(e);
    const result = await e.deliver(BODY);
    expect(result).toMatchObject({ delivered: true, rounds: 1, interrupted: false });
    expect(result.urls[0]).toMatchObject({ status: 200, attempts: 1, error: null });
    const [req] = s.requests;
    expect(req?.method).toBe("POST");
    expect(req?.url).toBe("/hooks/a?x=1");
    expect(req?.headers["user-agent"]).toBe("Segment.io/1.0");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["x-env"]).toBe("ci");
    expect(req?.headers["x-team"]).toBe("growth");
    expect(req?.body.equals(Buffer.from(BODY, "utf8"))).toBe(true);
    const expected = createHmac("sha1", "s3cret").update(Buffer.from(BODY, "utf8")).digest("hex");
    expect(req?.headers["x-signature"]).toBe(expected);
    expect(req?.headers["x-signature"]).toMatch(/^[0-9a-f]{40}$/);
  });

  it("sends no X-Signature without a secret, and takes a custom User-Agent", async () => {
    const s = await server();
    const e = undiciEngine({ targets: [{ url: s.url, headers: {} }], secret: undefined, userAgent: "acme-test/2" });
    engines.push(e);
    await e.deliver(Buffer.from(BODY));
    expect(s.requests[0]?.headers["x-signature"]).toBeUndefined();
    expect(s.requests[0]?.headers["user-agent"]).toBe("acme-test/2");
  });

  it("500, 500, 200: delivered after 3 attempts with identical bodies", async () => {
    const s = await server(statuses(500, 500, 200));
    const events: AttemptEvent[] = [];
    const result = await engine([s.url], {}, "k").deliver(BODY, { onAttempt: (e) => events.push(e) });
    expect(result.delivered).toBe(true);
    expect(result.rounds).toBe(3);
    expect(result.urls[0]).toMatchObject({ status: 200, attempts: 3, error: null });
    expect(s.requests).toHaveLength(3);
    expect(new Set(s.requests.map((r) => r.body.toString("base64")))).toEqual(new Set([Buffer.from(BODY).toString("base64")]));
    expect(new Set(s.requests.map((r) => r.headers["x-signature"])).size).toBe(1);
    expect(events.map((e) => [e.attempt, e.status, e.retryInMs !== undefined])).toEqual([
      [1, 500, true],
      [2, 500, true],
      [3, 200, false],
    ]);
  });

  it("400: one attempt, failed", async () => {
    const s = await server(statuses(400));
    const result = await engine([s.url]).deliver(BODY);
    expect(result).toMatchObject({ delivered: false, rounds: 1, interrupted: false });
    expect(result.urls[0]).toMatchObject({ status: 400, attempts: 1, error: "HTTP 400" });
    expect(s.requests).toHaveLength(1);
  });

  it("does not follow redirects: a 302 is a permanent failure", async () => {
    const target = await server();
    const s = await server((_req, res) => {
      res.writeHead(302, { Location: target.url });
      res.end();
    });
    const result = await engine([s.url]).deliver(BODY);
    expect(result.urls[0]).toMatchObject({ status: 302, attempts: 1 });
    expect(result.delivered).toBe(false);
    expect(target.requests).toHaveLength(0);
  });

  it("URL A 500 + URL B 200: delivered, A hit once and not retried", async () => {
    const a = await server(statuses(500));
    const b = await server(statuses(200));
    const result = await engine([a.url, b.url]).deliver(BODY);
    expect(result.delivered).toBe(true);
    expect(result.rounds).toBe(1);
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
    expect(result.urls.map((u) => [u.status, u.attempts])).toEqual([
      [500, 1],
      [200, 1],
    ]);
  });

  it("retries only the retryable URLs together; a permanent one is dropped", async () => {
    const flaky = await server(statuses(503, 503, 200));
    const gone = await server(statuses(410));
    const result = await engine([flaky.url, gone.url]).deliver(BODY);
    expect(result.delivered).toBe(true);
    expect(flaky.requests).toHaveLength(3);
    expect(gone.requests).toHaveLength(1);
    expect(result.urls[1]).toMatchObject({ status: 410, attempts: 1 });
  });

  it("retries connection refused, and reports it", async () => {
    const s = await server();
    const deadUrl = s.url;
    await s.close();
    servers.pop();
    const result = await engine([deadUrl], { retryWindowMs: 5_000 }).deliver(BODY);
    expect(result.delivered).toBe(false);
    expect(result.urls[0]?.attempts).toBeGreaterThan(1);
    expect(result.urls[0]?.error).toMatch(/ECONNREFUSED/);
    expect(result.urls[0]?.error).toMatch(/retry window closed/);
  });

  it("times out a slow answer with its own deadline and retries it", async () => {
    const s = await server((_req, res, index) => {
      if (index === 0) setTimeout(() => res.end(), 1500);
      else res.end();
    });
    const events: AttemptEvent[] = [];
    const result = await engine([s.url], { timeoutMs: 300 }).deliver(BODY, { onAttempt: (e) => events.push(e) });
    expect(result.delivered).toBe(true);
    expect(result.urls[0]?.attempts).toBe(2);
    expect(events[0]?.outcome).toEqual({ kind: "timeout" });
    expect(events[0]?.error).toMatch(/timeout: no response within 300ms/);
    expect(events[0]?.ms).toBeGreaterThanOrEqual(250);
    // The slow answer was cut off, not waited for: the second attempt got its 200.
    expect(events[1]?.status).toBe(200);
  });

  it("the one deadline also covers the TLS handshake: a server that never answers it times out", async () => {
    // Accepts TCP and stays silent, so the handshake never completes.
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => {
      sockets.push(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      const result = await engine([url], { timeoutMs: 300, retryWindowMs: 0 }).deliver(BODY);
      expect(result.urls[0]).toMatchObject({ status: null, attempts: 1 });
      expect(result.urls[0]?.error).toMatch(/timeout: no response within 300ms/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("a server that accepts and never answers times out", async () => {
    const s = await server(() => undefined);
    const result = await engine([s.url], { timeoutMs: 200, retryWindowMs: 0 }).deliver(BODY);
    expect(result.urls[0]).toMatchObject({ status: null, attempts: 1 });
    expect(result.urls[0]?.error).toMatch(/timeout/);
  });

  it("429 with Retry-After: 1 from a real response: the next attempt waits 1 s (virtual time)", async () => {
    const s = await server((_req, res, index) => {
      if (index === 0) {
        res.writeHead(429, { "Retry-After": "1" });
        res.end();
      } else res.end();
    });
    const events: AttemptEvent[] = [];
    // Without Retry-After, random 0 would retry at once.
    const result = await engine([s.url], { random: () => 0 }).deliver(BODY, { onAttempt: (e) => events.push(e) });
    expect(result.delivered).toBe(true);
    expect(events.map((e) => [e.status, e.retryInMs])).toEqual([
      [429, 1000],
      [200, undefined],
    ]);
  });

  it("the transport reports any answer's Retry-After; the classic rules count it on 429 and 503 only", async () => {
    const s = await server((_req, res, index) => {
      // The transport's request, then the engine's first: 500 with Retry-After; then 200.
      res.writeHead(index < 2 ? 500 : 200, index < 2 ? { "Retry-After": "7" } : {});
      res.end();
    });
    const transport = new UndiciTransport({ timeoutMs: 2000 });
    try {
      const report = await transport.send({ url: s.url, method: "POST", headers: {}, body: Buffer.from(BODY) }, { timeoutMs: 2000 });
      expect(report.outcome).toEqual({ kind: "status", status: 500, retryAfterMs: 7000 });
    } finally {
      await transport.close();
    }
    const events: AttemptEvent[] = [];
    // A 500's Retry-After does not replace the classic backoff: random 0 retries at once.
    const result = await engine([s.url], { random: () => 0 }).deliver(BODY, { onAttempt: (e) => events.push(e) });
    expect(result.delivered).toBe(true);
    expect(events.map((e) => [e.status, e.retryInMs])).toEqual([
      [500, 0],
      [200, undefined],
    ]);
  });

  it("runs the whole 4-hour schedule in virtual time: attempts, spacing, nothing after the window", async () => {
    const s = await server(statuses(500));
    const clock = new VirtualClock(1_000_000, { autoAdvance: true });
    const starts: number[] = [];
    const e = engine([s.url], { clock, random: () => 1 });
    const result = await e.deliver(BODY, { onAttempt: () => starts.push(clock.now()) });
    expect(result.delivered).toBe(false);
    // Same as the pure policy: 1 + 9 doubling + 46 capped retries.
    expect(result.urls[0]?.attempts).toBe(56);
    expect(s.requests).toHaveLength(56);
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] as number));
    expect(gaps.slice(0, 4)).toEqual([1000, 2000, 4000, 8000]);
    expect(gaps.at(-1)).toBe(300_000);
    expect((starts.at(-1) as number) - 1_000_000).toBeLessThanOrEqual(4 * 3600 * 1000);
    expect(result.urls[0]?.error).toMatch(/retry window closed/);
  }, 60_000);

  it("resumes a delivery's window from firstAttemptAt", async () => {
    const s = await server(statuses(500));
    const clock = new VirtualClock(10_000_000, { autoAdvance: true });
    const result = await engine([s.url], { clock, random: () => 1, retryWindowMs: 60_000 }).deliver(BODY, { firstAttemptAt: 10_000_000 - 59_500 });
    expect(result.urls[0]?.attempts).toBe(1);
  });

  it("reuses keep-alive connections across messages", async () => {
    const s = await server();
    let connections = 0;
    s.server.on("connection", () => (connections += 1));
    const e = engine([s.url]);
    for (let i = 0; i < 20; i++) await e.deliver(BODY);
    expect(s.requests).toHaveLength(20);
    // undici may open a second socket when the first is not yet marked free; without keep-alive it would be 20.
    expect(connections).toBeLessThanOrEqual(2);
  });

  it("reports an invalid target URL as a permanent failure", async () => {
    const result = await engine(["ftp://127.0.0.1/x"]).deliver(BODY);
    expect(result.urls[0]).toMatchObject({ attempts: 1, status: null });
    expect(result.urls[0]?.error).toMatch(/invalid URL/);
  });

  it("prepare() gives the exact request: headers and the bytes", () => {
    const e = undiciEngine({ targets: [], secret: "k", userAgent: "Segment.io/1.0" });
    engines.push(e);
    const prepared = e.prepare(BODY, { url: "http://127.0.0.1:1/x", headers: { "X-A": "1" } });
    expect(prepared.headers).toEqual({
      "User-Agent": "Segment.io/1.0",
      "Content-Type": "application/json",
      "X-Signature": createHmac("sha1", "k").update(BODY).digest("hex"),
      "X-A": "1",
    });
    expect(prepared.body.toString("utf8")).toBe(BODY);
  });
});

describe("DeliveryEngine and TLS", () => {
  let certs: TestCertificates;
  const httpsServer = httpsServersClosedAfterAll("ok");

  beforeAll(() => {
    certs = generateCertificates();
  });

  it("refuses a self-signed certificate: permanent, no request received, a message naming the cause and --ca", async () => {
    const h = await httpsServer(certs.selfSignedCert, certs.selfSignedKey);
    const result = await engine([h.url]).deliver(BODY);
    expect(result.delivered).toBe(false);
    expect(result.urls[0]).toMatchObject({ attempts: 1, status: null });
    expect(result.urls[0]?.error).toMatch(/not trusted/);
    expect(result.urls[0]?.error).toMatch(/self-signed/);
    expect(result.urls[0]?.error).toMatch(/--ca/);
    // Worded by us on every Node version: none of Node's own advice (24 suggests --use-system-ca).
    expect(result.urls[0]?.error).not.toMatch(/use-system-ca|Node\.js/);
    expect(h.requests).toBe(0);
  });

  it("refuses a CA-signed certificate whose CA is not trusted", async () => {
    const h = await httpsServer(certs.cert, certs.key);
    const result = await engine([h.url]).deliver(BODY);
    expect(result.urls[0]?.error).toMatch(/not trusted/);
    expect(h.requests).toBe(0);
  });

  it("accepts it when the CA is added; the default roots stay trusted too", async () => {
    const h = await httpsServer(certs.cert, certs.key);
    const result = await engine([h.url], { ca: [certs.caCert] }).deliver(BODY);
    expect(result.delivered).toBe(true);
    expect(h.requests).toBe(1);
  });

  it("an untrusted certificate fails only its own URL", async () => {
    const bad = await httpsServer(certs.selfSignedCert, certs.selfSignedKey);
    const flaky = await server(statuses(500, 200));
    const result = await engine([bad.url, flaky.url]).deliver(BODY);
    expect(result.delivered).toBe(true);
    expect(result.urls[0]).toMatchObject({ attempts: 1 });
    expect(result.urls[1]).toMatchObject({ attempts: 2, status: 200 });
    expect(bad.requests).toBe(0);
  });
});
