import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { Inspection } from "../../src/inspector/inspection.js";
import { startReceiver, type Receiver } from "../../src/receiver/server.js";
import { closeServersAfterEach } from "../helpers/setup.js";

const SECRET = "inspector-integration-secret";
const hmac = (body: string | Buffer) => createHmac("sha1", SECRET).update(body).digest("hex");
const track = (userId: string) =>
  JSON.stringify({ version: 1, type: "track", userId, event: "Signed Up", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });

const { server } = closeServersAfterEach();
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

/** A real receiver whose requests feed an Inspection serving its page on 127.0.0.1. */
async function inspected(keep = 1000): Promise<{ receiver: Receiver; inspection: Inspection; page: string }> {
  const inspection = new Inspection({ secret: SECRET, keep });
  const receiver = await startReceiver({ secret: SECRET, onRequest: inspection.add });
  inspection.setReceiverUrl(receiver.url);
  const page = await inspection.serve(0);
  opened.push(receiver, inspection);
  return { receiver, inspection, page };
}

async function deliver(url: string, body: string, signature = hmac(body), headers: Record<string, string> = {}): Promise<void> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", "x-signature": signature, ...headers }, body });
  await response.body.dump();
}

/** node:http, because it lets the test set Host (undici derives it from the URL). */
function get(url: string, headers: Record<string, string> = {}, method = "GET", body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("inspector page server", () => {
  it("answers 403 to a Host that is not a loopback name (DNS rebinding), and serves loopback names", async () => {
    const { page } = await inspected();
    const port = new URL(page).port;
    for (const host of [`evil.example:${port}`, `192.168.1.10:${port}`, `127.0.0.1.evil.example:${port}`]) {
      const refused = await get(`${page}/api/events`, { host });
      expect(refused.status, host).toBe(403);
      expect(JSON.parse(refused.body).error).toContain("loopback");
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `app.localhost:${port}`]) {
      const served = await get(`${page}/`, { host });
      expect(served.status, host).toBe(200);
      expect(served.body).toContain("<title>webhook-cli inspector</title>");
    }
  });

  it("refuses a Resend posted from another origin or as a form", async () => {
    const { receiver, inspection, page } = await inspected();
    await deliver(receiver.url, track("ada"));
    const host = new URL(page).host;
    const crossSite = await get(`${page}/api/requests/1/resend`, { host, origin: "http://evil.example", "content-type": "application/json" }, "POST", "{}");
    expect(crossSite.status).toBe(403);
    const form = await get(`${page}/api/requests/1/resend`, { host, "content-type": "application/x-www-form-urlencoded" }, "POST", "url=x");
    expect(form.status).toBe(403);
    expect(inspection.store.list()).toHaveLength(1);
  });

  it("shows one request with its diagnosis and credentials redacted, Resends it to a typed URL and downloads the rows as a recording", async () => {
    const target = await server();
    const { receiver, inspection, page } = await inspected();
    await deliver(`${receiver.url}/hooks`, track("ada"));
    const bad = track("bob");
    await deliver(`${receiver.url}/hooks`, bad, `sha1=${hmac(bad)}`, { authorization: "Bearer app-token", "x-env": "ci" });

    const detail = JSON.parse((await get(`${page}/api/requests/2`)).body) as Record<string, unknown>;
    expect(detail).toMatchObject({ label: "2", signature: "failed", userId: "bob", diagnosis: expect.stringContaining('"sha1=" prefix') });
    expect(detail["headers"]).toMatchObject({ authorization: "[redacted]", "x-env": "ci" });
    expect(detail["curl"]).toContain(`curl -q -sS -g --path-as-is --noproxy '*' -X POST '${receiver.url}/hooks'`);
    expect(detail["curlProblem"]).toBeNull();
    expect(detail["curl"]).toContain(`-H 'x-env: ci'`);
    expect(detail["curl"]).not.toContain("app-token");
    expect(detail["curl"]).not.toMatch(/authorization/i);

    const bogus = await get(`${page}/api/requests/1/resend`, { "content-type": "application/json" }, "POST", JSON.stringify({ url: "ftp://nowhere" }));
    expect(bogus.status).toBe(400);
    const resent = await get(`${page}/api/requests/2/resend`, { "content-type": "application/json" }, "POST", JSON.stringify({ url: `${target.url}/again` }));
    expect(resent.status).toBe(200);
    expect(JSON.parse(resent.body)).toMatchObject({ label: "R1", resendOf: 2, resendOfLabel: "2", signature: "ok", appStatus: 200 });
    expect(target.requests[0]?.body.toString()).toBe(bad);
    // Re-signed with the current secret (the original's prefixed signature is gone); its own headers carried.
    expect(target.requests[0]?.headers["x-signature"]).toBe(hmac(bad));
    expect(target.requests[0]?.headers["x-env"]).toBe("ci");
    expect(inspection.store.list().map((row) => row.label)).toEqual(["1", "2", "R1"]);

    const download = await get(`${page}/api/download?ids=3,1`);
    const lines = download.body
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => (line["body"] as { userId: string }).userId)).toEqual(["ada", "bob"]);
    expect(lines[0]).toMatchObject({ method: "POST", path: "/hooks", signatureValid: true });
    expect(await get(`${page}/api/requests/99`)).toMatchObject({ status: 404 });
  });

  it("streams the kept rows, then each new one, as server-sent events; keeps only --ui-keep rows", async () => {
    const { receiver, page } = await inspected(2);
    await deliver(receiver.url, track("one"));
    await deliver(receiver.url, track("two"));
    await deliver(receiver.url, track("three"));
    const stream = await request(`${page}/api/events`);
    expect(stream.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    let text = "";
    const events: string[] = [];
    const reading = (async () => {
      for await (const chunk of stream.body) {
        text += String(chunk);
        const parts = text.split("\n\n");
        text = parts.pop() ?? "";
        events.push(...parts);
        if (events.some((event) => event.startsWith("event: row"))) return;
      }
    })();
    await expect.poll(() => events.length).toBeGreaterThan(0);
    await deliver(receiver.url, track("four"));
    await reading;
    stream.body.destroy();
    const hello = JSON.parse((events[0] ?? "").split("data: ")[1] ?? "{}") as { rows: { userId: string }[]; keep: number };
    expect(hello.keep).toBe(2);
    expect(hello.rows.map((row) => row.userId)).toEqual(["two", "three"]);
    const row = events.find((event) => event.startsWith("event: row")) ?? "";
    expect(JSON.parse(row.split("data: ")[1] ?? "{}")).toMatchObject({ label: "4", userId: "four", signature: "ok" });
  });
});

describe("the inspector follows listen's routing (--forward-to TYPE=URL)", () => {
  it("a row's copy-as-curl and Resend go to its route; a row no route takes, to listen; the hello names the routes", async () => {
    const tracks = await server();
    const inspection = new Inspection({ secret: SECRET, routes: { fallback: null, byType: { track: `${tracks.url}/track` } } });
    const receiver = await startReceiver({ secret: SECRET, onRequest: inspection.add });
    inspection.setReceiverUrl(receiver.url);
    const page = await inspection.serve(0);
    opened.push(receiver, inspection);
    await deliver(`${receiver.url}/hooks`, track("ada"));
    const identify = JSON.stringify({ version: 1, type: "identify", userId: "bob", traits: {}, timestamp: "2024-01-01T00:00:00.000Z" });
    await deliver(`${receiver.url}/hooks`, identify);

    const routed = JSON.parse((await get(`${page}/api/requests/1`)).body) as Record<string, unknown>;
    expect(routed["forwardTarget"]).toBe(`${tracks.url}/track`);
    expect(routed["curl"]).toContain(`-X POST '${tracks.url}/track'`);
    const answered = JSON.parse((await get(`${page}/api/requests/2`)).body) as Record<string, unknown>;
    expect(answered["forwardTarget"]).toBeNull();
    expect(answered["curl"]).toContain(`-X POST '${receiver.url}/hooks'`);

    // Resend without a URL: each row to its own route, the unrouted one to listen itself.
    for (const id of [1, 2]) expect((await get(`${page}/api/requests/${id}/resend`, { "content-type": "application/json" }, "POST", "{}")).status).toBe(200);
    expect(tracks.requests.map((one) => [one.url, one.body.toString()])).toEqual([["/track", track("ada")]]);
    expect(inspection.store.list().map((row) => `${row.label}:${row.resend?.url ?? ""}`)).toEqual([
      "1:",
      "2:",
      `R1:${tracks.url}/track`,
      // listen received the resent identify: its own row, then the resend's.
      "3:",
      `R2:${receiver.url}`,
    ]);

    const stream = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${page}/api/events`, (res) => {
        res.once("data", (chunk: Buffer) => {
          resolve(chunk.toString());
          req.destroy();
        });
      });
      req.on("error", reject);
      req.end();
    });
    const hello = JSON.parse(/data: (.*)/.exec(stream)?.[1] ?? "{}") as Record<string, unknown>;
    expect(hello).toMatchObject({ forwardUrl: null, forwardByType: { track: `${tracks.url}/track` } });
  });
});
