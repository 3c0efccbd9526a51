import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess, type InProcessResult, type InProcessRun } from "../helpers/run-cli.js";

// 5,000 nested arrays (10 KB) once overflowed the stack of every recursive step that met them.
const DEEP = `${"[".repeat(5000)}${"]".repeat(5000)}`;
const SECRET = "e2e-nesting-secret";
const deepTrack = JSON.stringify({
  version: 1,
  type: "track",
  userId: "u1",
  event: "Deep",
  properties: { x: 0 },
  timestamp: "2024-01-01T00:00:00.000Z",
}).replace('{"x":0}', `{"x":${DEEP}}`);
const track = JSON.stringify({ version: 1, type: "track", userId: "u2", event: "Fine", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const hmac = (body: string) => createHmac("sha1", SECRET).update(body).digest("hex");

let dir: string;
let target: TestServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-nesting-"));
  target = await startServer();
});
afterAll(async () => {
  await target.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(args: string[]): Promise<{ url: string; done: Promise<InProcessResult>; run: InProcessRun }> {
  const run = startInProcess(args);
  const [, url] = await run.waitFor(/(?:Listening on |"url":")(http[^"\s]+)/, 15_000);
  return { url: url as string, done: run.done, run };
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: response.statusCode, text: await response.body.text() };
}

const noStack = (result: InProcessResult) => expect(result.stderr).not.toMatch(/RangeError|\n\s+at /);

describe("deeply nested JSON never stops a command or a receiver", () => {
  it.each([
    ["plain", [] as string[]],
    ["--verbose", ["--verbose"]],
    ["--record", ["--record", "REC"]],
  ])("listen (%s): a nested body with a wrong signature is answered, then the next request too", async (_name, extra) => {
    const record = join(dir, `listen-${_name.replace(/-/g, "")}.ndjson`);
    const { url, done, run } = await start(["listen", "--port", "0", "--secret", SECRET, ...extra.map((a) => (a === "REC" ? record : a))]);
    const deep = await post(`${url}/hook`, deepTrack, { "x-signature": "0".repeat(40) });
    expect(deep.status).toBe(401);
    expect((await post(`${url}/hook`, track, { "x-signature": hmac(track) })).status).toBe(200);
    run.stop("SIGTERM");
    const result = await done;
    noStack(result);
    expect(result.stdout).toContain("nested deeper than 512 levels");
    if (extra[0] === "--record") {
      const lines = readFileSync(record, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toHaveLength(2);
      expect(Buffer.from(lines[0]?.["rawBody"] as string, "base64").toString()).toBe(deepTrack);
    }
  });

  it("send: exit 2 naming the file, nothing sent", async () => {
    const file = join(dir, "deep.json");
    writeFileSync(file, deepTrack);
    const before = target.requests.length;
    const result = await runInProcess(["send", file, "--url", target.url, "--secret", SECRET]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("deep.json");
    expect(result.stderr).toContain("nested deeper than 512 levels");
    noStack(result);
    expect(target.requests.length).toBe(before);
  });

  it.each([["--properties"], ["--traits"]])("generate %s: exit 2 naming the flag", async (flag) => {
    const result = await runInProcess(["generate", "track", flag, `{"x":${DEEP}}`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(flag);
    noStack(result);
  });

  it("audience sync --members: exit 2 naming the file, in one line (no unsigned warning before it)", async () => {
    const members = join(dir, "members.json");
    writeFileSync(members, `["a", ${DEEP}]`);
    const result = await runInProcess(["audience", "sync", "--name", "Deep", "--members", members, "--state", join(dir, "aud.json"), "--url", target.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: .*--members: .*nested deeper than 512 levels\n$/);
    noStack(result);
  });

  it("replay: --dry-run reports the nested line, and the send pass sends nothing", async () => {
    const file = join(dir, "deep.ndjson");
    writeFileSync(file, `${track}\n${deepTrack}\n${track}\n`);
    const dry = await runInProcess(["replay", file, "--url", target.url, "--dry-run"]);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/deep\.ndjson:2: bad line: not JSON: nested deeper than 512 levels/);
    expect(dry.stderr).toContain("1 bad line");
    const before = target.requests.length;
    const real = await runInProcess(["replay", file, "--url", target.url]);
    expect(real.code).toBe(2);
    noStack(real);
    expect(target.requests.length).toBe(before);
    const skipped = await runInProcess(["replay", file, "--url", target.url, "--skip-invalid"]);
    expect(skipped.code).toBe(0);
    expect(target.requests.length).toBe(before + 2);
  });

  it("function run: an event, a --request file and --settings nested too deep: exit 2 naming the file, the function not run", async () => {
    const fn = join(dir, "destination.js");
    writeFileSync(fn, "async function onTrack(event) { return 1; }\n");
    const source = join(dir, "source.js");
    writeFileSync(source, "async function onRequest(request) {}\n");
    const events = join(dir, "deep-events.ndjson");
    writeFileSync(events, `${deepTrack}\n`);
    const deepEvent = await runInProcess(["function", "run", fn, events]);
    expect(deepEvent.code).toBe(2);
    expect(deepEvent.stderr).toMatch(/deep-events\.ndjson: not JSON: nested deeper than 512 levels: an event is a JSON object/);
    expect(deepEvent.stdout).not.toContain("onTrack");
    noStack(deepEvent);
    const requestFile = join(dir, "deep-request.json");
    writeFileSync(requestFile, `{"payload":{"body":{"x":${DEEP}},"headers":{},"queryParameters":{}}}`);
    const deepRequest = await runInProcess(["function", "run", source, "--request", requestFile]);
    expect(deepRequest.code).toBe(2);
    expect(deepRequest.stderr).toMatch(/deep-request\.json: .*nested deeper than 512 levels/);
    noStack(deepRequest);
    const deepSettings = await runInProcess(["function", "run", fn, "--type", "track", "--settings", `{"x":${DEEP}}`]);
    expect(deepSettings.code).toBe(2);
    expect(deepSettings.stderr).toMatch(/--settings: .*nested deeper than 512 levels/);
    noStack(deepSettings);
  });

  it("serve: a poison batch gets 400 (not a retry-forever 503)", async () => {
    const { url, run, done } = await start(["serve", "--port", "0", "--write-key", "wk", "--url", target.url, "--state", join(dir, "serve-state")]);
    const auth = { authorization: `Basic ${Buffer.from("wk:").toString("base64")}` };
    const batch = `{"batch":[{"type":"track","userId":"u","event":"E","properties":{"x":${DEEP}}}]}`;
    const answer = await post(`${url}/v1/batch`, batch, auth);
    expect(answer.status).toBe(400);
    expect(answer.text).toContain("nested deeper than 512 levels");
    const ok = await post(`${url}/v1/batch`, '{"batch":[{"type":"track","userId":"u","event":"E"}]}', auth);
    expect(ok.status).toBe(200);
    run.stop("SIGTERM");
    noStack(await done);
  });
});
