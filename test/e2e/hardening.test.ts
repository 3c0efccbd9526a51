import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Analytics } from "../../src/client/analytics.js";
import { runInProcess, startInProcess, type InProcessResult } from "../helpers/run-cli.js";
import { startServer, type TestServer } from "../helpers/http-server.js";

const track = (userId = "u1") => JSON.stringify({ version: 1, type: "track", userId, event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const TOKEN = "tok-9f8e7d6c5b4a";

let dir: string;
let ok: TestServer;
let failing: TestServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-hardening-"));
  ok = await startServer();
  failing = await startServer((_request, res) => {
    res.statusCode = 500;
    res.end("no");
  });
});
afterAll(async () => {
  await Promise.all([ok.close(), failing.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const usageError = (result: InProcessResult, mention: string | RegExp) => {
  expect(result.code).toBe(2);
  if (typeof mention === "string") expect(result.stderr).toContain(mention);
  else expect(result.stderr).toMatch(mention);
  expect(result.stderr).not.toMatch(/\n\s+at /);
};

describe("credentials never reach the output", () => {
  it("a URL with user:password@ is refused, the password masked in the error", async () => {
    const result = await runInProcess(["send", "--type", "track", "--url", `http://alice:hunter2@127.0.0.1:${ok.port}/hook`]);
    usageError(result, "alice:***@");
    expect(result.stderr).toContain("--header 'Authorization");
    expect(result.stderr + result.stdout).not.toContain("hunter2");
  });

  it("credential-like query values are masked in stdout, --json, retry lines, JUnit and the dead-letter file", async () => {
    const url = `${failing.url}/hook?api_key=${TOKEN}&access_token=${TOKEN}&plain=visible`;
    const junit = join(dir, "replay.xml");
    const send = await runInProcess(["send", "--type", "track", "--url", url, "--retry-window", "300ms"]);
    expect(send.code).toBe(1);
    const sendJson = await runInProcess(["send", "--type", "track", "--url", url, "--retry-window", "0ms", "--json"]);
    expect(sendJson.code).toBe(1);
    const file = join(dir, "one.ndjson");
    writeFileSync(file, `${track()}\n`);
    const deadLetter = join(dir, "dead.ndjson");
    const replay = await runInProcess(["replay", file, "--url", url, "--retry-window", "0ms", "--dead-letter", deadLetter, "--json", "--junit", junit]);
    expect(replay.code).toBe(1);
    const everything = [
      send.stdout,
      send.stderr,
      sendJson.stdout,
      sendJson.stderr,
      replay.stdout,
      replay.stderr,
      readFileSync(junit, "utf8"),
      readFileSync(deadLetter, "utf8"),
    ].join("\n");
    expect(everything).toContain("plain=visible");
    expect(everything).toContain("api_key=***");
    expect(everything).not.toContain(TOKEN);
    expect(failing.requests.at(-1)?.url).toContain(`api_key=${TOKEN}`);
  });

  it("text equal to the secret is masked in what send prints (here: a path segment)", async () => {
    const secret = "path-secret-42";
    const result = await runInProcess(["send", "--type", "track", "--url", `${failing.url}/hooks/${secret}/in`, "--retry-window", "0ms", "--json"], {
      env: { WEBHOOK_SECRET: secret },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("/hooks/***/in");
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it("listen records credential headers as [redacted] and masks credential-like query values in path, stdout and JUnit", async () => {
    const record = join(dir, "creds.ndjson");
    const junit = join(dir, "listen.xml");
    const listen = startInProcess(["listen", "--port", "0", "--record", record, "--junit", junit, "--count", "1"]);
    const [, url] = await listen.waitFor(/Listening on (http\S+)/);
    const response = await request(`${url}/hook?token=${TOKEN}&page=2`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": TOKEN, "api-key": TOKEN, "x-auth-token": TOKEN },
      body: track(),
    });
    await response.body.dump();
    const result = await listen.done;
    const line = JSON.parse(readFileSync(record, "utf8").trim()) as { path: string; headers: Record<string, string> };
    expect(line.path).toBe("/hook?token=***&page=2");
    expect([line.headers["x-api-key"], line.headers["api-key"], line.headers["x-auth-token"]]).toEqual(["[redacted]", "[redacted]", "[redacted]"]);
    expect(result.stdout + readFileSync(junit, "utf8")).not.toContain(TOKEN);
  });
});

describe("bad numbers, durations, headers and input are usage errors (exit 2)", () => {
  it.each([
    [["listen", "--exit-after", "1000h"], "--exit-after"],
    [["send", "--type", "track", "--url", "http://127.0.0.1:9/", "--timeout", "1000h"], "--timeout"],
    [["listen", "--respond", "101"], "--respond"],
    [["listen", "--fail-status", "100"], "--fail-status"],
    [["replay", "x.ndjson", "--url", "http://127.0.0.1:9/", "--rate", "0x10"], "--rate"],
    [["replay", "x.ndjson", "--url", "http://127.0.0.1:9/", "--rate", "1e3"], "--rate"],
    [["listen", "--port", " 5"], "--port"],
    [["send", "--type", "track", "--url", "http://127.0.0.1:9/", "--user-agent", "a\r\nInjected: yes"], "--user-agent"],
    [["send", "--type", "track", "--url", "http://127.0.0.1:9/", "--header", "X-Env: a\u0001b"], "--header"],
  ])("%j", async (args, flag) => {
    usageError(await runInProcess(args), flag);
  });

  it("send refuses input that is not UTF-8, naming the line, and sends nothing", async () => {
    const file = join(dir, "latin1.ndjson");
    writeFileSync(file, Buffer.concat([Buffer.from(`${track()}\n`), Buffer.from(track("caf\u00e9"), "latin1"), Buffer.from("\n")]));
    const before = ok.requests.length;
    usageError(await runInProcess(["send", file, "--url", ok.url]), /latin1\.ndjson:2.*not valid UTF-8/);
    expect(ok.requests.length).toBe(before);
  });

  it("send refuses standard input over 64 MiB with a clear error", async () => {
    const result = await runInProcess(["send", "-", "--url", ok.url], { input: Buffer.alloc(65 * 1024 * 1024, 0x20) });
    usageError(result, "over 64 MiB");
  });

  it("the library refuses timeout and flushAfter a timer cannot hold", () => {
    expect(() => new Analytics("wk", { timeout: 2 ** 31 })).toThrow(/timeout must be .* at most 2147483647/);
    expect(() => new Analytics("wk", { flushAfter: 2 ** 31 })).toThrow(/flushAfter/);
  });
});
