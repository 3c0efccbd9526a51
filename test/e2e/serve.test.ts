import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Analytics } from "../../src/client/analytics.js";
import { verify } from "../../src/signing/x-signature.js";
import { collect, spawnCli, waitForLine } from "../helpers/cli.js";
import { startServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { killChildrenAfterEach } from "../helpers/setup.js";

const SECRET = "e2e-secret";
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
// Registered after the directories' hook: after-each hooks run last-registered first, so serve is killed before its state goes.
// (Runs in process are stopped when their test ends, before any after-each hook.)
const children = killChildrenAfterEach();

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-serve-"));
  dirs.push(dir);
  return dir;
}

// --json puts the address in the `listening` event (the "Listening on" line then goes to stderr).
const LISTENING = /(?:Listening on |"url":")(http[^"\s]+)/;

async function start(args: string[]): Promise<{ run: InProcessRun; url: string; done: InProcessRun["done"]; stdout: () => string }> {
  const run = startInProcess(args);
  const [, url] = await run.waitFor(LISTENING, 15_000);
  return { run, url: url as string, done: run.done, stdout: run.stdout };
}

/** The built CLI as a child process: for what only a real process shows (here: SIGKILL). */
async function startProcess(args: string[]): Promise<{ child: ReturnType<typeof spawnCli>; url: string; done: ReturnType<typeof collect> }> {
  const child = spawnCli(args);
  children.push(child);
  const done = collect(child, 60_000);
  const [, url] = await waitForLine(child, LISTENING, 15_000);
  return { child, url: url as string, done };
}

function recorded(file: string): { body: Record<string, unknown>; headers: Record<string, string>; signatureValid: boolean }[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { body: Record<string, unknown>; headers: Record<string, string>; signatureValid: boolean });
}

function analytics(url: string, writeKey = "wk_e2e"): Analytics {
  return new Analytics(writeKey, { endpoint: url, flushAt: 10, flushAfter: 50, maxRetries: 5 });
}

describe("webhook-cli serve", () => {
  it("the bundled client → serve → listen: all five call types signed, exact shapes, integrations routing, deletion", async () => {
    const dir = tempDir();
    const record = join(dir, "received.ndjson");
    const listen = await start(["listen", "--port", "0", "--secret", SECRET, "--strict", "--record", record]);
    const serve = await start([
      "serve",
      "--port",
      "0",
      "--write-key",
      "wk_e2e",
      "--url",
      `${listen.url}/hook`,
      "--secret",
      SECRET,
      "--state",
      join(dir, "state"),
    ]);

    const client = analytics(serve.url);
    const timestamp = "2024-03-01T10:00:00.000Z";
    client.identify({ userId: "u1", traits: { plan: "pro" }, timestamp });
    client.track({ userId: "u1", event: "Order Completed", properties: { total: 42 }, timestamp });
    client.page({ anonymousId: "anon-1", properties: { path: "/pricing", title: "Pricing" }, timestamp });
    client.group({ userId: "u1", groupId: "g1", traits: { size: 10 }, timestamp });
    client.alias({ userId: "u2", previousId: "u1", timestamp });
    client.track({ userId: "blocked", event: "Hidden", integrations: { All: false } });
    client.track({ userId: "chosen", event: "Shown", integrations: { All: false, Webhooks: true }, timestamp });
    await client.close();

    // Deletion: u1 was seen by the one source.
    const deletion = await fetch(`${serve.url}/v1/delete`, {
      method: "POST",
      headers: { Authorization: `Basic ${Buffer.from("wk_e2e:").toString("base64")}`, "Content-Type": "application/json" },
      body: JSON.stringify({ userId: "u1" }),
    });
    expect(await deletion.json()).toEqual({ success: true, sources: ["default"] });

    const health = async () => (await (await fetch(`${serve.url}/health`)).json()) as Record<string, number>;
    await expect.poll(async () => (await health()).delivered, { timeout: 20_000 }).toBe(7);
    expect(await health()).toMatchObject({ accepted: 8, filtered: 1, delivered: 7, retrying: 0, failed: 0, pending: 0 });
    listen.run.stop("SIGINT");
    const listened = await listen.done;
    // listen exits 0 only when every request was valid (signature and shape, --strict).
    expect(listened.code).toBe(0);
    expect(listened.stdout).toContain("7 requests, 7 valid");

    const requests = recorded(record);
    expect(requests).toHaveLength(7);
    for (const request of requests) {
      expect(request.signatureValid).toBe(true);
      expect(request.headers["user-agent"]).toBe("Segment.io/1.0");
      expect(verify(SECRET, JSON.stringify(request.body), request.headers["x-signature"])).toBe(true);
    }
    const byKey = new Map(requests.map((r) => [`${String(r.body["type"])}:${String(r.body["userId"] ?? r.body["anonymousId"] ?? r.body["User ID"])}`, r.body]));
    expect([...byKey.keys()].sort()).toEqual(["alias:u2", "delete:u1", "group:u1", "identify:u1", "page:anon-1", "track:chosen", "track:u1"]);

    const library = (byKey.get("identify:u1")!["context"] as Record<string, unknown>)["library"];
    expect(library).toMatchObject({ name: expect.any(String) });
    const context = { library, ip: "127.0.0.1" };
    // The whole message (docs/messages.md#whole-messages-from-serve): the client's messageId, receivedAt, sentAt; its timestamp kept as originalTimestamp.
    const whole = { context, messageId: expect.any(String), receivedAt: expect.any(String), sentAt: expect.any(String), originalTimestamp: timestamp };
    expect(byKey.get("identify:u1")).toEqual({ version: 1, type: "identify", userId: "u1", traits: { plan: "pro" }, timestamp: expect.any(String), ...whole });
    expect(byKey.get("track:u1")).toEqual({
      version: 1,
      type: "track",
      userId: "u1",
      event: "Order Completed",
      properties: { total: 42 },
      timestamp: expect.any(String),
      ...whole,
    });
    expect(byKey.get("page:anon-1")).toEqual({
      version: 1,
      type: "page",
      anonymousId: "anon-1",
      properties: { path: "/pricing", title: "Pricing" },
      timestamp: expect.any(String),
      ...whole,
    });
    expect(byKey.get("group:u1")).toEqual({
      version: 1,
      type: "group",
      groupId: "g1",
      userId: "u1",
      traits: { size: 10 },
      timestamp: expect.any(String),
      ...whole,
    });
    expect(byKey.get("alias:u2")).toEqual({ version: 1, type: "alias", "Previous ID": "u1", "User ID": "u2", timestamp: expect.any(String), ...whole });
    for (const [key, body] of byKey) {
      if (key.startsWith("delete")) continue;
      // Same clock on both sides: the skew correction moves the timestamp by the request's time in flight only.
      expect(Math.abs(Date.parse(String(body["timestamp"])) - Date.parse(timestamp)), key).toBeLessThan(5_000);
    }
    expect(byKey.get("delete:u1")).toEqual({ type: "delete", userId: "u1", timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });

    // Wrong key and malformed body, on the built server.
    const wrong = await fetch(`${serve.url}/v1/batch`, {
      method: "POST",
      headers: { Authorization: `Basic ${Buffer.from("nope:").toString("base64")}` },
      body: "{}",
    });
    expect(wrong.status).toBe(401);
    const malformed = await fetch(`${serve.url}/v1/batch`, {
      method: "POST",
      headers: { Authorization: `Basic ${Buffer.from("wk_e2e:").toString("base64")}` },
      body: "{oops",
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ success: false, code: "invalid_request", message: expect.stringContaining("not valid JSON") });

    serve.run.stop("SIGINT");
    const stopped = await serve.done;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain("Summary: 8 accepted, 0 rejected, 1 filtered, 7 delivered, 0 retrying, 0 failed, 0 pending");
  });

  it("SIGKILL while the receiver answers 503, restart with a healthy receiver: every message arrives exactly once", { tags: ["smoke"] }, async () => {
    const dir = tempDir();
    const state = join(dir, "state");
    const total = 60;
    const delivered = 15;
    // The first receiver accepts 15 requests, then answers 503 to everything.
    const script = [...Array<string>(delivered).fill("200"), "503"].join(",");
    const record = join(dir, "healthy.ndjson");
    const [sick, healthy] = await Promise.all([
      start(["listen", "--port", "0", "--secret", SECRET, "--script", script, "--json"]),
      start(["listen", "--port", "0", "--secret", SECRET, "--record", record]),
    ]);
    const serveArgs = (url: string) => [
      "serve",
      "--port",
      "0",
      "--write-key",
      "wk_e2e",
      "--url",
      `${url}/hook`,
      "--secret",
      SECRET,
      "--state",
      state,
      "--retry-window",
      "1h",
      "--concurrency",
      "8",
    ];
    // A real process, killed hard (SIGKILL) below; the rest run in process.
    const first = await startProcess(serveArgs(sick.url));

    const client = analytics(first.url);
    for (let seq = 0; seq < total; seq++) client.track({ userId: `user-${seq}`, event: "Numbered", properties: { seq } });
    await client.close();
    expect(client.listenerCount("error")).toBe(0);

    // Wait until the sick receiver has answered 503 to messages it has not taken, then kill serve hard.
    const answered = () =>
      sick
        .stdout()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { event: string; userId: string; status: number })
        .filter((event) => event.event === "request");
    await expect.poll(() => answered().filter((e) => e.status === 503).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(10);
    first.child.kill("SIGKILL");
    const killed = await first.done;
    expect(killed.signal).toBe("SIGKILL");
    sick.run.stop("SIGINT");
    await sick.done;
    const acceptedBySick = new Set(
      answered()
        .filter((e) => e.status === 200)
        .map((e) => e.userId),
    );
    expect(acceptedBySick.size).toBe(delivered);

    const second = await start(serveArgs(healthy.url));
    // Once nothing is pending, every request this run will make has been answered (and recorded first).
    const health = async () => (await (await fetch(`${second.url}/health`)).json()) as Record<string, number>;
    await expect.poll(async () => (await health()).pending, { timeout: 20_000 }).toBe(0);
    expect(await health()).toMatchObject({ delivered: total - delivered, pending: 0, failed: 0 });

    const resent = recorded(record).map((r) => String(r.body["userId"]));
    expect(resent).toHaveLength(total - delivered);
    expect(new Set(resent).size).toBe(resent.length);
    for (const userId of resent) expect(acceptedBySick.has(userId)).toBe(false);
    const all = new Set([...acceptedBySick, ...resent]);
    expect(all.size).toBe(total);
    for (const r of recorded(record)) expect(r.signatureValid).toBe(true);

    second.run.stop("SIGTERM");
    expect((await second.done).code).toBe(0);
    healthy.run.stop("SIGINT");
    await healthy.done;
  });

  it("SIGTERM does not wait for a destination that never answers: the attempt is cut, the message stays queued for the next run", async () => {
    const dir = tempDir();
    const state = join(dir, "state");
    const silent = await startServer(() => {});
    const answering = await startServer();
    try {
      const serveArgs = (url: string) => ["serve", "--port", "0", "--url", url, "--timeout", "60s", "--state", state];
      const first = await start(serveArgs(`${silent.url}/hook`));
      expect((await fetch(`${first.url}/v1/track`, { method: "POST", body: JSON.stringify({ userId: "u_1", event: "Kept" }) })).status).toBe(200);
      await expect.poll(() => silent.requests.length, { timeout: 20_000 }).toBe(1);

      // The attempt in flight has a 60 s deadline: a stop that waited for it would not end within the test.
      first.run.stop("SIGTERM");
      const stopped = await first.done;
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).toContain("0 failed, 1 pending");

      const second = await start(serveArgs(`${answering.url}/hook`));
      await expect.poll(() => answering.requests.length, { timeout: 20_000 }).toBe(1);
      expect(JSON.parse(answering.requests[0]?.body.toString("utf8") ?? "{}")).toMatchObject({ userId: "u_1", event: "Kept" });
      second.run.stop("SIGTERM");
      expect((await second.done).code).toBe(0);
    } finally {
      await Promise.all([silent.close(), answering.close()]);
    }
  });

  it("--failed lists the messages given up; a bad flag exits 2 naming it", async () => {
    const dir = tempDir();
    const state = join(dir, "state");
    const refusing = await start(["listen", "--port", "0", "--respond", "400"]);
    const serve = await start(["serve", "--port", "0", "--url", `${refusing.url}/hook`, "--state", state, "--json"]);
    const response = await fetch(`${serve.url}/v1/identify`, { method: "POST", body: JSON.stringify({ userId: "refused" }) });
    expect(response.status).toBe(200);
    await expect.poll(async () => ((await (await fetch(`${serve.url}/health`)).json()) as { failed: number }).failed, { timeout: 20_000 }).toBe(1);
    serve.run.stop("SIGINT");
    const stopped = await serve.done;
    expect(stopped.code).toBe(1);
    const events = stopped.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ event: "listening" });
    expect(events).toContainEqual(expect.objectContaining({ event: "delivery", type: "identify", userId: "refused", delivered: false }));
    expect(events.at(-1)).toMatchObject({ event: "summary", accepted: 1, failed: 1 });
    expect(stopped.stderr).toContain("no source configured");

    const [listed, bad] = await Promise.all([runInProcess(["serve", "--failed", "--state", state]), runInProcess(["serve", "--port", "99999"])]);
    expect(listed.code).toBe(0);
    const line = JSON.parse(listed.stdout.trim()) as { body: Record<string, unknown>; failure: { status: number; attempts: number } };
    expect(line.body).toMatchObject({ type: "identify", userId: "refused" });
    expect(line.failure).toMatchObject({ status: 400, attempts: 1 });
    refusing.run.stop("SIGINT");
    await refusing.done;

    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--port");
  });
});
