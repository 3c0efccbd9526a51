import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { jsonEvents, runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// listen's scripted answers (docs/receiver.md#scripted-answers), driven from its flags and answered to real clients: undici and curl.
const SECRET = "rules-secret";
const sign = (body: string) => createHmac("sha1", SECRET).update(body).digest("hex");
const message = (fields: Record<string, unknown>) => JSON.stringify({ version: 1, userId: "u1", timestamp: "2024-01-01T00:00:00.000Z", ...fields });
const track = message({ type: "track", event: "Order Completed", properties: { total: 42 } });
const identify = message({ type: "identify", traits: { plan: "pro" } });
const page = message({ type: "page", name: "Home" });

const { dir } = tempDir("webhook-cli-rules-");
const runs: InProcessRun[] = [];
const apps: TestServer[] = [];
afterEach(async () => {
  for (const run of runs.splice(0)) {
    run.stop("SIGINT");
    await run.code;
  }
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const RULES = [
  {
    match: { type: "track", event: "Order Completed" },
    respond: { status: 201, headers: { "X-Order": "accepted", "Set-Cookie": "a=1" }, body: { queued: true } },
  },
  { match: { path: "/echo" }, respond: { echo: true, headers: { "X-Echo": "yes" } } },
  { match: { type: "page" }, respond: { status: 202, body: "later", delay: "300ms" } },
];

async function listen(args: string[]): Promise<{ url: string; run: InProcessRun }> {
  const run = startInProcess(["listen", "--port", "0", "--secret", SECRET, "--json", ...args], { cwd: dir });
  runs.push(run);
  const [, url] = await run.waitFor(/"url":"([^"]+)"/);
  return { url: url as string, run };
}

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", "x-signature": sign(body), ...headers }, body });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

function curl(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile("curl", ["-q", "-sS", "--noproxy", "*", ...args], (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }));
  });
}

function requestEvents(run: InProcessRun): Record<string, unknown>[] {
  return jsonEvents(run.stdout(), "request");
}

describe("listen --responses, --respond-header, --respond-body", () => {
  it("answers by the first matching rule (status, headers, JSON body), echoes, delays, and falls back to --respond with its headers and body", async () => {
    writeFileSync(join(dir, "rules.json"), JSON.stringify(RULES));
    const { url, run } = await listen(["--responses", "rules.json", "--respond", "202", "--respond-header", "X-Default: 1", "--respond-body", "fine"]);

    const ordered = await post(`${url}/hooks`, track);
    expect(ordered).toMatchObject({ status: 201, text: '{"queued":true}' });
    expect(ordered.headers).toMatchObject({ "x-order": "accepted", "set-cookie": "a=1", "content-type": "application/json" });

    // Echo: the exact bytes and Content-Type back, with the rule's header.
    const odd = `{ "type": "identify", "userId": "u1",  "traits": {"é": 1} }`;
    const echoed = await post(`${url}/echo`, odd, { "content-type": "application/json; charset=utf-8" });
    expect(echoed).toMatchObject({ status: 200, text: odd });
    expect(echoed.headers).toMatchObject({ "content-type": "application/json; charset=utf-8", "x-echo": "yes" });

    const started = performance.now();
    const delayed = await post(`${url}/hooks`, page);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(delayed).toMatchObject({ status: 202, text: "later" });
    expect(delayed.headers["content-type"]).toBe("text/plain; charset=utf-8");

    // No rule matches: --respond's status with --respond-header and --respond-body.
    const fallback = await post(`${url}/hooks`, identify);
    expect(fallback).toMatchObject({ status: 202, text: "fine" });
    expect(fallback.headers["x-default"]).toBe("1");
    expect(fallback.headers["x-order"]).toBeUndefined();

    // A failed signature keeps its 401, whatever rule matches.
    const forged = await post(`${url}/hooks`, track, { "x-signature": "0".repeat(40) });
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.text)).toMatchObject({ error: "X-Signature does not match the body" });

    await run.waitFor(/"status":401/);
    expect(requestEvents(run).map((event) => [event["status"], event["rule"] ?? null])).toEqual([
      [201, 0],
      [200, 1],
      [202, 2],
      [202, null],
      [401, null],
    ]);
  });

  it("answers curl alike: headers, body and echo", async () => {
    writeFileSync(join(dir, "rules-curl.json"), JSON.stringify(RULES));
    const { url } = await listen(["--responses", "rules-curl.json"]);
    const ordered = await curl([
      "-i",
      "-X",
      "POST",
      `${url}/hooks`,
      "-H",
      "content-type: application/json",
      "-H",
      `x-signature: ${sign(track)}`,
      "--data-binary",
      track,
    ]);
    expect(ordered.code).toBe(0);
    expect(ordered.stdout).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(ordered.stdout).toMatch(/\r\nx-order: accepted\r\n/i);
    expect(ordered.stdout.endsWith('\r\n\r\n{"queued":true}')).toBe(true);
    const echoed = await curl([
      "-X",
      "POST",
      `${url}/echo?x=1`,
      "-H",
      "content-type: text/plain",
      "-H",
      `x-signature: ${sign("plain words")}`,
      "--data-binary",
      "plain words",
    ]);
    expect(echoed).toEqual({ code: 0, stdout: "plain words" });
  });

  it("--script and --fail-first come before the rules; injected answers are not the rule's", async () => {
    writeFileSync(join(dir, "rules-faults.json"), JSON.stringify(RULES));
    const { url, run } = await listen(["--responses", "rules-faults.json", "--fail-first", "1"]);
    expect((await post(`${url}/hooks`, track)).status).toBe(503);
    expect((await post(`${url}/hooks`, track)).status).toBe(201);
    const scripted = await listen(["--responses", "rules-faults.json", "--script", "500,200"]);
    expect((await post(`${scripted.url}/hooks`, track)).status).toBe(500);
    expect((await post(`${scripted.url}/hooks`, track)).status).toBe(200);
    await run.waitFor(/"status":201/);
    expect(requestEvents(run).map((event) => event["rule"] ?? null)).toEqual([null, 0]);
  });

  it("with --forward-to, a matching rule answers and the app answers the rest", async () => {
    const app = await startServer((_request, res) => {
      res.writeHead(207, { "x-from": "app" }).end("from the app");
    });
    apps.push(app);
    writeFileSync(join(dir, "rules-forward.json"), JSON.stringify(RULES));
    const { url } = await listen(["--responses", "rules-forward.json", "--forward-to", `${app.url}/webhook`, "--respond-body", "never"]);
    expect(await post(`${url}/hooks`, track)).toMatchObject({ status: 201, text: '{"queued":true}' });
    const relayed = await post(`${url}/hooks`, identify);
    expect(relayed).toMatchObject({ status: 207, text: "from the app" });
    expect(relayed.headers["x-from"]).toBe("app");
    expect(app.requests.map((r) => JSON.parse(r.body.toString()).type)).toEqual(["identify"]);
  });

  it("the inspector's row and detail name the rule that answered", async () => {
    writeFileSync(join(dir, "rules-ui.json"), JSON.stringify(RULES));
    const { url, run } = await listen(["--responses", "rules-ui.json", "--ui", "--ui-port", "0"]);
    const [, page] = await run.waitFor(/"inspector":"([^"]+)"/);
    await post(`${url}/hooks`, identify);
    await post(`${url}/hooks`, track);
    await run.waitFor(/"status":201/);
    const rows = await Promise.all([1, 2].map(async (id) => (await (await fetch(`${page}/api/requests/${id}`)).json()) as Record<string, unknown>));
    expect(rows.map((row) => [row["type"], row["status"], row["rule"]])).toEqual([
      ["identify", 200, null],
      ["track", 201, 0],
    ]);
  });
});

describe("refused rules and headers: exit 2, naming the file, the rule and the key", () => {
  const refused = async (rules: unknown, extra: string[] = []) => {
    writeFileSync(join(dir, "bad.json"), typeof rules === "string" ? rules : JSON.stringify(rules));
    const result = await runInProcess(["listen", "--port", "0", "--responses", "bad.json", ...extra], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    return result.stderr;
  };

  it.each([
    [[{ respond: { status: 200 } }, { respond: { status: 700 } }], 'error: bad.json: key "[1].respond.status": Too big: expected number to be <=599\n'],
    [[{ match: { tpye: "track" }, respond: {} }], 'error: bad.json: key "[0].match": unknown key "tpye"\n'],
    [[{ match: { type: "trak" }, respond: {} }], /^error: bad\.json: key "\[0\]\.match\.type": Invalid option: expected one of "page"\|/],
    [[{ respond: { echo: true, body: "x" } }], 'error: bad.json: key "[0].respond": body and echo exclude each other\n'],
    [[{ respond: { delay: "2 seconds" } }], /^error: bad\.json: key "\[0\]\.respond\.delay": invalid duration "2 seconds"/],
    [
      [{ respond: { headers: { "X-Evil": "a\r\nSet-Cookie: b=1" } } }],
      /^error: bad\.json: key "\[0\]\.respond\.headers\.X-Evil": header "X-Evil" has a value with control characters/,
    ],
    [[{ respond: { headers: { "Content-Length": "5" } } }], /cannot be set: listen frames its answers itself/],
    [{ respond: {} }, /^error: bad\.json: Invalid input: expected array, received object/],
    ["[{", /^error: bad\.json: not valid JSON/],
  ])("%j", async (rules, expected) => {
    const stderr = await refused(rules);
    if (typeof expected === "string") expect(stderr).toBe(expected);
    else expect(stderr).toMatch(expected);
  });

  it("--respond-header is checked as a delivery header; --respond-body @FILE must exist", async () => {
    const bad = await runInProcess(["listen", "--port", "0", "--respond-header", "X-A: b\u0000c"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --respond-header: header "X-A" has a value with control characters/);
    const form = await runInProcess(["listen", "--port", "0", "--respond-header", "no colon"], { cwd: dir });
    expect(form.stderr).toBe(`error: --respond-header: "no colon" is not of the form 'Name: value'\n`);
    const missing = await runInProcess(["listen", "--port", "0", "--respond-body", "@nowhere.json"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: nowhere\.json: --respond-body: cannot read: no such file \(ENOENT\)$/m);
  });
});
