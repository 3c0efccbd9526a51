import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MESSAGE_TYPES } from "../../src/messages/schemas.js";
import { sendRaw } from "../helpers/hostile-requests.js";
import { startServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess, type InProcessResult, type InProcessRun } from "../helpers/run-cli.js";
import { generateCertificates, type TestCertificates } from "../helpers/tls.js";

const SECRET = "e2e-listen-secret";
const hmac = (body: string) => createHmac("sha1", SECRET).update(body).digest("hex");
const track = (userId = "u1") =>
  JSON.stringify({ version: 1, type: "track", userId, event: "Signed Up", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-listen-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function listen(args: string[], env: Record<string, string> = {}): Promise<{ run: InProcessRun; url: string; done: Promise<InProcessResult> }> {
  const run = startInProcess(["listen", "--port", "0", ...args], { env });
  const [, url] = await run.waitFor(/(?:Listening on |"url":")(http[^"\s]+)/, 15_000);
  return { run, url: url as string, done: run.done };
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  await response.body.dump();
  return response.statusCode;
}

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("webhook-cli listen", () => {
  it("prints Listening first, one line per request, a summary; --count exits 0 when all were valid", async () => {
    const { url, done } = await listen(["--secret", SECRET, "--count", "2"]);
    expect(await post(`${url}/hook`, track("ada"), { "x-signature": hmac(track("ada")) })).toBe(200);
    expect(await post(`${url}/hook`, track("bob"), { "x-signature": hmac(track("bob")) })).toBe(200);
    const result = await done;
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toBe(`Listening on ${url}`);
    expect(lines[1]).toMatch(/^Control API: http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines[2]).toMatch(/^#1 POST \/hook {2}track {2}ada {2}"Signed Up" {2}signature ok {2}\d+ B {2}→ 200$/);
    expect(lines.at(-1)).toBe("Summary: 2 requests, 2 valid, 0 invalid");
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });

  it("--json: listening, request events and a summary; an invalid request makes --count exit 1", async () => {
    const { url, done } = await listen(["--secret", SECRET, "--count", "3", "--json"]);
    await post(`${url}/a`, track(), { "x-signature": hmac(track()) });
    await post(`${url}/b`, track(), { "x-signature": hmac(track()).toUpperCase() });
    const broken = JSON.stringify({ version: 1, type: "page", userId: "u2", timestamp: "2024-01-01T00:00:00.000Z" });
    await post(`${url}/c`, broken, { "x-signature": hmac(broken) });
    const result = await done;
    expect(result.code).toBe(1);
    const events = jsonLines(result.stdout);
    expect(events.map((e) => e["event"])).toEqual(["listening", "request", "request", "request", "summary"]);
    expect(events[0]).toMatchObject({ url, port: Number(new URL(url).port) });
    expect(events[1]).toEqual({
      event: "request",
      method: "POST",
      path: "/a",
      type: "track",
      userId: "u1",
      eventName: "Signed Up",
      valid: true,
      problem: null,
      signatureValid: true,
      signatureRule: "body",
      signatureScheme: "default",
      signatureSecret: 1,
      bodyKind: "message",
      shapeErrors: [],
      status: 200,
    });
    expect(events[2]).toMatchObject({
      path: "/b",
      valid: false,
      problem: "X-Signature does not match the body",
      signatureValid: false,
      signatureScheme: "default",
      signatureReason: "mismatch",
      status: 401,
      diagnosis: "the digest is upper-case hex: send it lowercase",
    });
    expect(events[3]).toMatchObject({
      path: "/c",
      eventName: null,
      valid: false,
      problem: 'missing required key "properties"',
      signatureValid: true,
      status: 200,
      shapeErrors: [{ key: "properties", message: 'missing required key "properties"' }],
    });
    expect(events[4]).toMatchObject({ event: "summary", received: 3, valid: 1, invalid: 2 });
  });

  it("a request-target that is not a path gets 400 and counts as an invalid request (--count exits 1)", async () => {
    const { url, done } = await listen(["--count", "1", "--json"]);
    const port = Number(new URL(url).port);
    const answer = await sendRaw(port, Buffer.from(`POST *@127.0.0.1:9/x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 2\r\n\r\n{}`));
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    const result = await done;
    expect(result.code, result.stderr).toBe(1);
    const events = jsonLines(result.stdout);
    expect(events[1]).toMatchObject({ event: "request", method: "POST", path: "*@127.0.0.1:9/x", status: 400, valid: false });
    expect(events[1]?.["problem"]).toMatch(/^the request-target must be a path/);
    expect(events.at(-1)).toMatchObject({ event: "summary", received: 1, valid: 0, invalid: 1 });
  });

  it("--exit-after before --count exits 1; --junit writes one test case per request", async () => {
    const junit = join(dir, "report.xml");
    const { url, done } = await listen(["--count", "3", "--exit-after", "1500ms", "--junit", junit], { WEBHOOK_SECRET: SECRET });
    await post(url, track(), { "x-signature": hmac(track()) });
    await post(url, track(), { "x-signature": "0".repeat(40) });
    const result = await done;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--exit-after 1\.5s came before --count 3 requests \(2 received\)/);
    const xml = readFileSync(junit, "utf8");
    // The early --exit-after is a failing case too: the report never looks greener than the exit status.
    expect(xml).toContain('<testsuite name="webhook-cli listen" tests="3" failures="2"');
    expect(xml).toMatch(
      /<testcase name="--count 3 requests"[^>]*>\s*<failure message="--exit-after 1\.5s came before --count 3 requests \(2 received\)" type="count">/,
    );
    expect(xml).toContain('<testcase name="#1 track POST /" classname="webhook-cli.listen"');
    expect(xml).toMatch(/<failure message="signature: X-Signature does not match the body" type="signature">/);
  });

  it("a recording survives SIGINT intact, holds every request and never the secret; exit 0", async () => {
    const record = join(dir, "sigint.ndjson");
    const secretFile = join(dir, "secret.txt");
    writeFileSync(secretFile, `${SECRET}\n`);
    const { run, url, done } = await listen(["--secret-file", secretFile, "--record", record]);
    const bodies = Array.from({ length: 20 }, (_, i) => track(`user-${i}`));
    await Promise.all(bodies.map((body) => post(url, body, { "x-signature": hmac(body), authorization: `Bearer ${SECRET}` })));
    run.stop("SIGINT");
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Summary: 20 requests, 20 valid, 0 invalid");
    const text = readFileSync(record, "utf8");
    expect(text).not.toContain(SECRET);
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { body: { userId: string }; signatureValid: boolean; headers: Record<string, string> });
    expect(lines.map((l) => l.body.userId).sort()).toEqual(bodies.map((b) => (JSON.parse(b) as { userId: string }).userId).sort());
    expect(lines.every((l) => l.signatureValid && l.headers["authorization"] === "[redacted]")).toBe(true);
  });

  it("SIGTERM is a normal stop too: summary, exit 1 when a request was invalid", async () => {
    const { run, url, done } = await listen([]);
    expect(await post(url, "{not json")).toBe(200);
    run.stop("SIGTERM");
    const result = await done;
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("shape: not JSON");
    expect(result.stdout).toContain("Summary: 1 request, 0 valid, 1 invalid");
    expect(result.stderr).toContain("no secret given");
  });

  it("exits 2 naming the problem: port in use, bad flag values, half a TLS pair", async () => {
    const busy = await startServer();
    try {
      const inUse = await runInProcess(["listen", "--port", String(busy.port)]);
      expect(inUse.code).toBe(2);
      expect(inUse.stderr).toContain(`cannot listen on 127.0.0.1:${busy.port}: the port is already in use (EADDRINUSE)`);
      expect(inUse.stderr).not.toContain("    at ");
      const uiInUse = await runInProcess(["listen", "--port", "0", "--ui", "--ui-port", String(busy.port)]);
      expect(uiInUse.code).toBe(2);
      expect(uiInUse.stderr).toContain(`--ui-port: cannot listen on 127.0.0.1:${busy.port}: the port is already in use (EADDRINUSE)`);
    } finally {
      await busy.close();
    }
    const cases: [string[], RegExp][] = [
      [["--fail-rate", "1.5"], /--fail-rate: invalid value "1\.5"/],
      [["--script", "503,nope"], /--script: entry 2 "nope"/],
      [["--delay", "5"], /--delay: invalid duration "5"/],
      [["--respond", "99"], /--respond: invalid value "99"/],
      [["--tls-cert", "x.pem"], /--tls-cert needs --tls-key/],
      [["--port", "70000"], /--port: invalid value "70000"/],
    ];
    const results = await Promise.all(cases.map(([args]) => runInProcess(["listen", ...args])));
    for (const [i, [args, pattern]] of cases.entries()) {
      const result = results[i] as InProcessResult;
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(pattern);
      expect(result.stdout).toBe("");
    }
  });
});

describe("listen with the real send command", () => {
  let certs: TestCertificates;
  beforeAll(() => {
    certs = generateCertificates();
  });
  afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));

  it("send → listen round trip of all seven message types over HTTPS with a generated certificate", async () => {
    const { url, done } = await listen(["--secret", SECRET, "--count", "7", "--strict", "--json", "--tls-cert", certs.certPath, "--tls-key", certs.keyPath]);
    expect(url).toMatch(/^https:/);
    const generated = await runInProcess(["generate", "--seed", "5"]);
    const sent = await runInProcess(["send", "-", "--url", `${url}/hook`, "--secret", SECRET, "--ca", certs.caCertPath, "--json"], { input: generated.stdout });
    expect(sent.code).toBe(0);
    const result = await done;
    expect(result.code).toBe(0);
    const requests = jsonLines(result.stdout).filter((e) => e["event"] === "request");
    expect(requests.map((e) => e["type"])).toEqual([...MESSAGE_TYPES]);
    for (const e of requests) expect(e).toMatchObject({ signatureValid: true, shapeErrors: [], status: 200 });
  });

  it("fault flags as send sees them: --fail-first/--fail-status, --script timeout and drop, --respond, --delay", async () => {
    const sendTo = (url: string, extra: string[] = []) =>
      runInProcess(["send", "--type", "track", "--url", url, "--secret", SECRET, "--timeout", "500ms", "--retry-window", "10s", "--json", ...extra]);
    const deliveries = (result: InProcessResult) =>
      jsonLines(result.stdout).filter((e) => e["event"] === "delivery") as {
        delivered: boolean;
        urls: { status: number | null; attempts: number; error: string | null; ms: number }[];
      }[];

    const failFirst = await listen(["--secret", SECRET, "--fail-first", "1", "--fail-status", "502", "--count", "2", "--json"]);
    const first = await sendTo(failFirst.url);
    expect(first.code).toBe(0);
    expect(deliveries(first)[0]?.urls[0]).toMatchObject({ status: 200, attempts: 2 });
    const failFirstDone = await failFirst.done;
    expect(failFirstDone.code).toBe(0);
    expect(
      jsonLines(failFirstDone.stdout)
        .filter((e) => e["event"] === "request")
        .map((e) => e["status"]),
    ).toEqual([502, 200]);

    const script = await listen(["--secret", SECRET, "--script", "timeout,drop,201", "--count", "3"]);
    const scripted = await sendTo(script.url);
    expect(scripted.code).toBe(0);
    expect(deliveries(scripted)[0]?.urls[0]).toMatchObject({ status: 201, attempts: 3 });
    const scriptDone = await script.done;
    expect(scriptDone.code).toBe(0);
    expect(scriptDone.stdout).toMatch(/→ held \(timeout\)[\s\S]*→ dropped[\s\S]*→ 201 \(injected\)/);

    // The request that reaches --count is held as the others: listen stops once its answer is out.
    const refusing = await listen(["--secret", SECRET, "--respond", "400", "--delay", "300ms", "--count", "1"]);
    const refused = await sendTo(refusing.url);
    expect(refused.code).toBe(1);
    expect(deliveries(refused)[0]).toMatchObject({ delivered: false, urls: [{ status: 400, attempts: 1 }] });
    // The answer was held: the sender's own measure of its attempt (a loopback answer takes a few ms).
    // Not 300: libuv starts a timer from the loop's cached time, so on a loaded machine it can fire
    // some milliseconds early by the wall clock.
    expect(deliveries(refused)[0]?.urls[0]?.ms).toBeGreaterThanOrEqual(250);
    // An injected answer never changes the verdict or listen's exit code.
    expect((await refusing.done).code).toBe(0);
  });
});
