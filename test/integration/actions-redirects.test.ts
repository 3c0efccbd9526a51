import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpMethod, Target } from "../../src/config/destination.js";
import type { DeliveryEngine } from "../../src/delivery/deliver.js";
import { undiciEngine } from "../../src/delivery/undici-engine.js";
import { VirtualClock } from "../../src/util/clock.js";

/** Redirects followed by Webhooks (Actions), against real servers on loopback (docs/actions.md#redirects). */

const SECRET = "s3cr3t";
const BODY = JSON.stringify({ type: "track", userId: "u_1", event: "Order Completed", timestamp: "2024-01-01T00:00:00.000Z" });
const SIGNATURE = createHmac("sha1", SECRET).update(BODY).digest("hex");

interface Seen {
  host: string;
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** The answer to a request: sent at once, or `afterMs` later; "hang": never. */
type Route = (path: string, index: number) => { status: number; location?: string; afterMs?: number } | "hang";

const servers: Server[] = [];
const engines: DeliveryEngine[] = [];

async function server(route: Route, host = "127.0.0.1"): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      seen.push({ host, method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const answer = route(req.url ?? "", seen.length - 1);
      if (answer === "hang") return;
      setTimeout(() => {
        res.writeHead(answer.status, answer.location !== undefined ? { location: answer.location } : {});
        res.end("moved");
      }, answer.afterMs ?? 0);
    });
  });
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, host, resolve));
  return { url: `http://${host}:${(s.address() as AddressInfo).port}`, seen };
}

function engine(target: Target, destination: "classic" | "actions" = "actions", timeoutMs = 2000): DeliveryEngine {
  const e = undiciEngine(
    { targets: [target], secret: SECRET, userAgent: destination === "actions" ? "Segment (Actions)" : "Segment.io/1.0", destination },
    // Virtual waits of 1 s; the window allows a few retries, however long the real attempts take.
    { clock: new VirtualClock(Date.now(), { autoAdvance: true }), random: () => 1, timeoutMs, retryWindowMs: 3_000 },
  );
  engines.push(e);
  return e;
}

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  for (const s of servers.splice(0)) s.closeAllConnections();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const redirectTo =
  (status: number, location = "/target"): Route =>
  (path) =>
    path === "/hook" ? { status, location } : { status: 200 };

describe("Webhooks (Actions) follows redirects as fetch does", () => {
  const cases: [number, HttpMethod, HttpMethod | "GET"][] = [
    [307, "POST", "POST"],
    [308, "PUT", "PUT"],
    [307, "PATCH", "PATCH"],
    [301, "POST", "GET"],
    [302, "POST", "GET"],
    [301, "PUT", "PUT"],
    [302, "PATCH", "PATCH"],
    [303, "POST", "GET"],
    [303, "PUT", "GET"],
  ];
  for (const [status, method, then] of cases) {
    it(`${status} after ${method}: the next request is ${then}${then === "GET" ? " without a body" : " with the same body"}, X-Signature and headers kept`, async () => {
      const { url, seen } = await server(redirectTo(status));
      const result = await engine({ url: `${url}/hook`, headers: { Authorization: "Bearer t" }, method }).deliver(BODY);
      expect(result).toMatchObject({ delivered: true, urls: [{ status: 200, attempts: 1 }] });
      expect(seen.map((r) => [r.method, r.path])).toEqual([
        [method, "/hook"],
        [then, "/target"],
      ]);
      const [, next] = seen;
      expect(next?.body).toBe(then === "GET" ? "" : BODY);
      expect(next?.headers["x-signature"]).toBe(SIGNATURE);
      expect(next?.headers["authorization"]).toBe("Bearer t");
      expect(next?.headers["user-agent"]).toBe("Segment (Actions)");
    });
  }

  it("to another host: the credentials stay behind, the rest follows", async () => {
    const other = await server(() => ({ status: 200 }), "127.0.0.2");
    const { url, seen } = await server(() => ({ status: 307, location: `${other.url}/target` }));
    const result = await engine({ url: `${url}/hook`, headers: { Authorization: "Bearer t", "X-Env": "ci" } }).deliver(BODY);
    expect(result.delivered).toBe(true);
    expect(seen).toHaveLength(1);
    expect(other.seen[0]).toMatchObject({ method: "POST", path: "/target", body: BODY });
    expect(other.seen[0]?.headers["authorization"]).toBeUndefined();
    expect(other.seen[0]?.headers["x-env"]).toBe("ci");
  });

  it("follows 20 redirects at most: the 21st is the answer, a failure that is not retried", async () => {
    const { url, seen } = await server((path) => ({ status: 307, location: `/loop/${Number(path.split("/")[2] ?? 0) + 1}` }));
    const result = await engine({ url: `${url}/loop/0`, headers: {} }).deliver(BODY);
    expect(result).toMatchObject({ delivered: false, rounds: 1, urls: [{ status: 307, attempts: 1, error: "HTTP 307: more than 20 redirects" }] });
    expect(seen).toHaveLength(21);
    expect(seen.at(-1)?.path).toBe("/loop/20");
  });

  it("a redirect without a Location is the answer: a failure, not retried", async () => {
    const { seen, url } = await server(() => ({ status: 302 }));
    const result = await engine({ url: `${url}/hook`, headers: {} }).deliver(BODY);
    expect(result).toMatchObject({ delivered: false, urls: [{ status: 302, attempts: 1, error: "HTTP 302" }] });
    expect(seen).toHaveLength(1);
  });

  it("a retryable answer at the end of the chain retries the whole chain from the webhook's URL", async () => {
    const { url, seen } = await server((path, index) => (path === "/hook" ? { status: 308, location: "/target" } : { status: index < 2 ? 503 : 200 }));
    const result = await engine({ url: `${url}/hook`, headers: {} }).deliver(BODY);
    expect(result).toMatchObject({ delivered: true, urls: [{ status: 200, attempts: 2 }] });
    expect(seen.map((r) => r.path)).toEqual(["/hook", "/target", "/hook", "/target"]);
  });

  it("one deadline covers the whole chain", async () => {
    // Two hops of 200 ms each: within a deadline of 300 ms per hop, past one of 300 ms for the chain.
    // Load only makes them longer, so the verdict cannot flip to delivered.
    const { url } = await server((path) => (path === "/hook" ? { status: 307, location: "/slow", afterMs: 200 } : { status: 200, afterMs: 200 }));
    const result = await engine({ url: `${url}/hook`, headers: {} }, "actions", 300).deliver(BODY);
    // Three attempts (at 0, 1 s and 3 s of the 3 s window, waited in virtual time), each cut at 300 ms.
    expect(result.urls[0]).toMatchObject({ status: null, attempts: 3, error: "timeout: no response within 300ms; retry window closed" });
  });
});

describe("classic never follows a redirect", () => {
  it("a 307 is a failure, not retried, and nothing else is requested", async () => {
    const { url, seen } = await server(redirectTo(307));
    const result = await engine({ url: `${url}/hook`, headers: {} }, "classic").deliver(BODY);
    expect(result).toMatchObject({ delivered: false, rounds: 1, urls: [{ status: 307, attempts: 1, error: "HTTP 307" }] });
    expect(seen).toHaveLength(1);
  });
});
