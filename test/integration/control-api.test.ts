import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// listen's control port and its query API (docs/receiver.md#control-api), and `expect` against it, in process.
const SECRET = "control-secret";
const sign = (body: string) => createHmac("sha1", SECRET).update(body).digest("hex");
const message = (type: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    version: 1,
    type,
    userId: "u1",
    timestamp: "2024-01-01T00:00:00.000Z",
    ...(type === "track" ? { event: "Order Completed", properties: {} } : {}),
    ...fields,
  });

const { dir } = tempDir("webhook-cli-control-");
const runs: InProcessRun[] = [];
afterEach(async () => {
  for (const run of runs.splice(0)) {
    run.stop("SIGINT");
    await run.code;
  }
});

async function listen(args: string[] = []): Promise<{ url: string; control: string; run: InProcessRun }> {
  const run = startInProcess(["listen", "--port", "0", "--secret", SECRET, "--json", ...args], { cwd: dir });
  runs.push(run);
  const [line] = await run.waitFor(/\{"event":"listening".*\}\n/);
  const listening = JSON.parse(line) as { url: string; control: string };
  return { ...listening, run };
}

async function post(url: string, body: string, signature = sign(body), method = "POST") {
  const response = await request(url, { method: method as "POST", headers: { "content-type": "application/json", "x-signature": signature }, body });
  await response.body.dump();
  return response.statusCode;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await request(url, { headers });
  return { status: response.statusCode, headers: response.headers, json: (await response.body.json()) as Record<string, unknown> };
}

const indexes = (json: Record<string, unknown>) => (json["requests"] as { index: number }[]).map((r) => r.index);

describe("the control port", () => {
  it("is on its own port, printed at start, in the JSON listening event and on line 2 of --ready-file; never on the webhook port", async () => {
    const human = startInProcess(["listen", "--port", "0", "--ready-file", "ready.url"], { cwd: dir });
    runs.push(human);
    const [, url, control] = await human.waitFor(/Listening on (\S+)\nControl API: (\S+)\n/);
    expect(control).not.toBe(url);
    expect(readFileSync(join(dir, "ready.url"), "utf8")).toBe(`${url}\n${control}\n`);
    const { status } = await get(`${control}/api/received`);
    expect(status).toBe(200);
    // On the webhook port the same path is a request under test: GET is answered 405 and counted.
    const onWebhookPort = await request(`${url}/api/received`);
    await onWebhookPort.body.dump();
    expect(onWebhookPort.statusCode).toBe(405);
    const { json } = await get(`${control}/api/received`);
    expect(json).toMatchObject({ received: 1, matched: 1, requests: [{ method: "GET", path: "/api/received", valid: false, status: 405 }] });
  });

  it("lists and counts what arrived, filtered by type, event, user, path, method, kind, verdict and time, in pages", async () => {
    const { url, control } = await listen();
    const before = new Date().toISOString();
    await post(`${url}/a?x=1`, message("track"));
    await post(`${url}/a`, message("track", { userId: "u2" }));
    await post(`${url}/b`, message("identify", { traits: {} }), sign("x"));
    await post(`${url}/b`, message("page", { name: "Home", properties: {} }), undefined, "PUT");
    await post(`${url}/c`, "[null]");
    const all = await get(`${control}/api/received`);
    expect(all.json).toMatchObject({ received: 5, dropped: 0, complete: true, matched: 5, more: false });
    expect(all.headers["content-type"]).toBe("application/json; charset=utf-8");
    const query = async (q: string) => indexes((await get(`${control}/api/received?${q}`)).json);
    expect(await query("type=track")).toEqual([1, 2]);
    expect(await query("type=track&event=Order%20Completed&userId=u2")).toEqual([2]);
    expect(await query("path=/a")).toEqual([1, 2]);
    expect(await query("path=/a%3Fx%3D1")).toEqual([1]);
    expect(await query("method=put")).toEqual([4]);
    expect(await query("kind=batch")).toEqual([5]);
    expect(await query("verdict=invalid")).toEqual([3]);
    expect(await query("verdict=valid&type=identify")).toEqual([]);
    expect(await query(`since=${encodeURIComponent(before)}`)).toEqual([1, 2, 3, 4, 5]);
    expect(await query(`until=${encodeURIComponent(before)}`)).toEqual([]);
    expect(await query(`since=${Date.now() + 60_000}`)).toEqual([]);
    const page = await get(`${control}/api/received?limit=2&after=1`);
    expect(page.json).toMatchObject({ matched: 5, more: true });
    expect(indexes(page.json)).toEqual([2, 3]);
    const invalid = (await get(`${control}/api/received?verdict=invalid`)).json["requests"] as Record<string, unknown>[];
    expect(invalid[0]).toEqual({
      index: 3,
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      method: "POST",
      path: "/b",
      kind: "message",
      type: "identify",
      event: null,
      userId: "u1",
      valid: false,
      signature: "failed",
      scheme: "default",
      problem: "X-Signature does not match the body",
      status: 401,
      fault: null,
      rule: null,
    });
  });

  it("refuses bad queries with 400 naming the parameter", async () => {
    const { control } = await listen();
    for (const [q, error] of [
      ["tpye=track", /^unknown parameter "tpye": expected type, event/],
      ["type=trak", /^key "type": Invalid option/],
      ["verdict=maybe", /^key "verdict": Invalid option/],
      ["since=yesterday", /^since: "yesterday" is not an ISO 8601 date-time/],
      ["limit=0", /^limit: "0" is not a whole number from 1 to 1000/],
      ["count=-1", /^count: "-1" is not a whole number/],
      ["timeout=soon", /^key "timeout": invalid duration "soon"/],
    ] as const) {
      const { status, json } = await get(`${control}/api/wait?${q}`);
      expect([q, status]).toEqual([q, 400]);
      expect(json["error"]).toMatch(error);
    }
  });

  it("a wait answers as soon as enough have matched, or at its timeout with what arrived", async () => {
    const { url, control } = await listen();
    await post(`${url}/hooks`, message("track"));
    // Held until the second track: an answer any earlier would say so (1 matched, 1 or 2 received).
    const waiting = get(`${control}/api/wait?type=track&count=2&timeout=10s`);
    await post(`${url}/hooks`, message("identify", { traits: {} }));
    await post(`${url}/hooks`, message("track"));
    const { json } = await waiting;
    expect(json).toMatchObject({ met: true, count: 2, matched: 2, received: 3, window: { received: 3 } });
    expect(indexes(json)).toEqual([1, 3]);
    const late = await get(`${control}/api/wait?type=alias&timeout=200ms`);
    expect(late.json).toMatchObject({ met: false, matched: 0, window: { received: 3, recent: [{ index: 1 }, { index: 2 }, { index: 3 }] } });
  });

  it("caps the waits held at once, with a clear 503; listen's stop answers those held, marked stopped", async () => {
    const { control, run } = await listen();
    const held = Array.from({ length: 16 }, () => get(`${control}/api/wait?type=track&timeout=30s`));
    // The 17th is refused once the 16 are held.
    let refused: Awaited<ReturnType<typeof get>> | undefined;
    await expect
      .poll(async () => {
        refused = await get(`${control}/api/wait?type=track&timeout=1ms`);
        return refused.status;
      })
      .toBe(503);
    expect(refused?.headers["retry-after"]).toBe("1");
    expect(refused?.json).toEqual({ error: "too many waits at once: at most 16 long-polls are held; retry when one ends", limit: 16 });
    run.stop("SIGINT");
    const answers = await Promise.all(held);
    expect(answers.map((a) => [a.status, a.json["met"], a.json["stopped"]])).toEqual(Array.from({ length: 16 }, () => [200, false, true]));
  });

  it("answers only loopback Host names, and no other page (Origin, Sec-Fetch-Site)", async () => {
    const { control } = await listen();
    const port = new URL(control).port;
    const raw = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: "/api/received", headers }, (res) => {
          let body = "";
          res.on("data", (chunk: Buffer) => (body += chunk.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        req.end();
      });
    expect(await raw({ host: "rebind.example:1234" })).toMatchObject({ status: 403, body: expect.stringContaining("answers only loopback names") });
    expect(await raw({ host: `127.0.0.1:${port}`, origin: "https://evil.example" })).toMatchObject({ status: 403 });
    expect(await raw({ host: `127.0.0.1:${port}`, "sec-fetch-site": "cross-site" })).toMatchObject({ status: 403 });
    expect(await raw({ host: `localhost:${port}` })).toMatchObject({ status: 200 });
    expect((await get(`${control}/`)).status).toBe(404);
  });

  it("with --ui it is the page's port; --ui-port sets it without --ui", async () => {
    const ui = await listen(["--ui", "--ui-port", "0"]);
    expect(ui.run.stdout()).toMatch(new RegExp(`"control":"${ui.control}","inspector":"${ui.control}"`));
    expect((await get(`${ui.control}/api/received`)).status).toBe(200);
    const probe = await listen();
    const port = new URL(probe.control).port;
    probe.run.stop("SIGINT");
    await probe.run.code;
    runs.splice(runs.indexOf(probe.run), 1);
    const fixed = await listen(["--ui-port", port]);
    expect(fixed.control).toBe(`http://127.0.0.1:${port}`);
  });
});

describe("expect, in process", () => {
  it("exits 0 when enough valid requests matched, 1 with what did arrive when not, 2 for bad input", async () => {
    const { url, control } = await listen(["--ready-file", "expect.url"]);
    await post(`${url}/hooks`, message("track"));
    await post(`${url}/hooks`, message("track"), sign("forged"));
    const pass = await runInProcess(["expect", "--from", "expect.url", "--type", "track", "--event", "Order Completed"], { cwd: dir });
    expect(pass).toEqual({
      code: 0,
      stdout: '✓ 1 request since listen started matching {type: "track", event: "Order Completed"} with a valid verdict (expected at least 1)\n',
      stderr: "",
    });
    const fail = await runInProcess(["expect", "--from", control, "--type", "track", "--count", "2", "--timeout", "200ms"], { cwd: dir });
    expect(fail.code).toBe(1);
    expect(fail.stdout).toBe(
      [
        '✗ expected at least 2 requests since listen started matching {type: "track"} with a valid verdict; 1 arrived (waited 200ms)',
        "2 requests arrived: 1 track (valid), 1 track (invalid)",
        '  #1 POST /hooks  track  u1  "Order Completed"  valid  → 200',
        '  #2 POST /hooks  track  u1  "Order Completed"  invalid (X-Signature does not match the body)  → 401',
        "",
      ].join("\n"),
    );
    const any = await runInProcess(["expect", "--from", control, "--type", "track", "--count", "2", "--verdict", "any", "--json"], { cwd: dir });
    expect(any.code).toBe(0);
    expect(JSON.parse(any.stdout)).toMatchObject({ event: "expect", met: true, matched: 2 });
    const later = await runInProcess(["expect", "--from", control, "--since", new Date(Date.now() + 1000).toISOString(), "--timeout", "100ms"], { cwd: dir });
    expect(later.code).toBe(1);
    expect(later.stdout).toMatch(
      /^✗ expected at least 1 request since \S+ matching any request with a valid verdict; 0 arrived \(waited 100ms\)\nNothing arrived\.\n$/,
    );
  });

  it.each([
    [["--from", "missing.url"], /^error: missing\.url: --from: cannot read: no such file \(ENOENT\)$/m],
    [["--from", "one-line.url"], /^error: one-line\.url: --from: no control API URL on line 2/],
    [["--from", "http://127.0.0.1:9"], /^error: --from: http:\/\/127\.0\.0\.1:9 does not answer: connection refused \(ECONNREFUSED\): is listen running\?\n$/],
    [["--from", "x", "--verdict", "maybe"], /^error: --verdict: invalid value "maybe": expected one of valid, invalid, any\n$/],
    [["--from", "x", "--type", "trak"], /^error: --type: unknown message type "trak" \(Did you mean track\?\)/],
    [["--from", "x", "--since", "yesterday"], /^error: --since: invalid time "yesterday"/],
    [["--type", "track"], /required option '--from <url\|file>' not specified/],
  ])("exit 2: %j", async (args, error) => {
    writeFileSync(join(dir, "one-line.url"), "http://127.0.0.1:8080\n");
    const result = await runInProcess(["expect", "--timeout", "1s", ...args], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(error);
    expect(result.stdout).toBe("");
  });
});
