import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { startServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess, type InProcessResult } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const SECRET = "e2e-forward-secret";
const hmac = (body: string | Buffer) => createHmac("sha1", SECRET).update(body).digest("hex");
// Not what JSON.stringify would produce (spacing, escapes): the relay must not touch the bytes.
const BODY = '{ "type":"track", "userId":"ada", "event":"Sign\\u0065d Up",\n "properties":{}, "version":1, "timestamp":"2024-01-01T00:00:00.000Z" }';

const { server } = closeServersAfterEach();
const files = tempDir("webhook-cli-e2e-forward-");

async function listen(args: string[]): Promise<{ url: string; done: Promise<InProcessResult> }> {
  const run = startInProcess(["listen", "--port", "0", "--secret", SECRET, ...args]);
  const [, url] = await run.waitFor(/(?:Listening on |"url":")(http[^"\s]+)/, 15_000);
  return { url: url as string, done: run.done };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http rather than undici: it lets the test send hop-by-hop headers as a client would. */
function post(url: string, body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("listen --forward-to", () => {
  it("relays the exact bytes and the sender's X-Signature, drops hop-by-hop headers, answers with the app's response and records it", async () => {
    const big = "x".repeat(70_000);
    const app = await server((_request, res, index) => {
      res.writeHead(index === 0 ? 201 : 200, { "content-type": "application/json", "x-app": "yes", "set-cookie": "session=abc" });
      res.end(index === 0 ? '{"id":7}' : big);
    });
    const recording = `${files.dir}/forwarded.ndjson`;
    const { url, done } = await listen(["--forward-to", `${app.url}/webhook?from=listen`, "--record", recording, "--count", "2", "--json"]);

    const answer = await post(`${url}/hooks`, BODY, {
      "x-signature": hmac(BODY),
      "x-custom": "kept",
      connection: "keep-alive, x-per-hop",
      "x-per-hop": "dropped",
      "keep-alive": "timeout=5",
    });
    expect(answer).toMatchObject({ status: 201, body: '{"id":7}' });
    expect(answer.headers["x-app"]).toBe("yes");
    const second = await post(`${url}/hooks`, BODY, { "x-signature": hmac(BODY) });
    expect(second.body).toBe(big);

    const received = app.requests[0];
    expect(received?.url).toBe("/webhook?from=listen");
    expect(received?.body.toString("utf8")).toBe(BODY);
    expect(received?.headers["x-signature"]).toBe(hmac(BODY));
    expect(received?.headers["x-custom"]).toBe("kept");
    expect(received?.headers["x-per-hop"]).toBeUndefined();
    expect(received?.headers["keep-alive"]).toBeUndefined();

    const result = await done;
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ event: "listening", forwardTo: `${app.url}/webhook?from=listen` });
    expect(events[1]).toMatchObject({ event: "request", signatureValid: true, status: 201, app: { status: 201, error: null } });
    expect((events[1] as { app: { ms: number } }).app.ms).toBeGreaterThanOrEqual(0);

    const lines = readFileSync(recording, "utf8")
      .trim()
      .split("\n")
      // biome-ignore lint/suspicious/noExplicitAny: recording lines, read field by field in the assertions
      .map((line) => JSON.parse(line) as Record<string, any>);
    expect(lines[0]?.["rawBody"]).toBe(Buffer.from(BODY).toString("base64"));
    expect(lines[0]?.["response"]).toMatchObject({ status: 201, body: '{"id":7}', headers: { "x-app": "yes", "set-cookie": "[redacted]" } });
    expect(typeof lines[0]?.["response"].ms).toBe("number");
    expect(lines[1]?.["response"]).toMatchObject({ status: 200, bodySize: 70_000, bodySha256: createHash("sha256").update(big).digest("hex") });
    expect(lines[1]?.["response"].body).toBeUndefined();
  });

  it("drops the response headers the app names in its own Connection header, and its hop-by-hop ones", async () => {
    const app = await server((_request, res) => {
      res.writeHead(200, { connection: "X-Foo, close", "x-foo": "1", "keep-alive": "timeout=42, max=7", "x-app": "yes", "content-type": "application/json" });
      res.end("{}");
    });
    // The app really sends them: seen by a client talking to it directly.
    const direct = await post(app.url, BODY, {});
    expect(direct.headers).toMatchObject({ connection: "X-Foo, close", "x-foo": "1", "keep-alive": "timeout=42, max=7" });

    const recording = `${files.dir}/connection.ndjson`;
    const { url, done } = await listen(["--forward-to", app.url, "--record", recording, "--count", "1"]);
    const answer = await post(`${url}/hooks`, BODY, { "x-signature": hmac(BODY) });
    expect(answer.status).toBe(200);
    expect(answer.headers["x-app"]).toBe("yes");
    expect(answer.headers["x-foo"]).toBeUndefined();
    // listen's own connection may be kept alive (node:http then says `timeout=5`), never with the app's terms.
    expect(answer.headers["keep-alive"]).not.toBe("timeout=42, max=7");
    expect(answer.headers["connection"]).not.toContain("X-Foo");
    expect((await done).code).toBe(0);

    // The recording keeps the headers relayed to the sender.
    const line = JSON.parse(readFileSync(recording, "utf8").trim()) as { response: { headers: Record<string, unknown> } };
    expect(line.response.headers).toMatchObject({ "x-app": "yes", "content-type": "application/json" });
    expect(Object.keys(line.response.headers)).not.toContain("x-foo");
    expect(Object.keys(line.response.headers)).not.toContain("keep-alive");
    expect(Object.keys(line.response.headers)).not.toContain("connection");
  });

  it("answers 502 with a JSON reason when the app is down", async () => {
    const gone = await startServer();
    await gone.close();
    const { url, done } = await listen(["--forward-to", `${gone.url}/webhook`, "--count", "1"]);
    const answer = await post(`${url}/hooks`, BODY, { "x-signature": hmac(BODY) });
    expect(answer.status).toBe(502);
    expect(answer.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(answer.body) as { error: string; reason: string };
    expect(body.error).toBe(`the app at ${gone.url}/webhook could not be reached`);
    expect(body.reason).toContain("ECONNREFUSED");
    const result = await done;
    // The request itself was valid: an unreachable app does not change the exit code.
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/signature ok {2}\d+ B {2}→ 502: connection refused/);
  });

  it("answers 504 when the app is slower than --forward-timeout", async () => {
    const app = await server((_request, res) => void setTimeout(() => res.end("late"), 3_000));
    const { url, done } = await listen(["--forward-to", app.url, "--forward-timeout", "300ms", "--count", "1"]);
    // The app answers after 3 s: a 504 saying the 300 ms passed is listen's own, given before the app's answer.
    const answer = await post(url, BODY, { "x-signature": hmac(BODY) });
    expect(answer.status).toBe(504);
    expect(JSON.parse(answer.body)).toEqual({ error: `the app at ${app.url}/ did not answer in time`, reason: "no answer within 300ms" });
    expect((await done).stdout).toContain("→ 504: no answer within 300ms");
  });

  it("answers injected failures itself: they never reach the app", async () => {
    const app = await server();
    const { url, done } = await listen(["--forward-to", app.url, "--fail-first", "2", "--fail-status", "500", "--count", "3"]);
    expect((await post(url, BODY, { "x-signature": hmac(BODY) })).status).toBe(500);
    expect((await post(url, BODY, { "x-signature": hmac(BODY) })).status).toBe(500);
    expect(app.requests).toHaveLength(0);
    expect((await post(url, BODY, { "x-signature": hmac(BODY) })).status).toBe(200);
    expect(app.requests).toHaveLength(1);
    const lines = (await done).stdout.split("\n").filter((line) => line.startsWith("#"));
    expect(lines.map((line) => line.replace(/^.*→ /, ""))).toEqual(["500 (injected)", "500 (injected)", expect.stringMatching(/^200 from the app in \d+ms$/)]);
  });

  it("refuses a --forward-to that is not an http(s) URL, naming the flag", async () => {
    const result = await runInProcess(["listen", "--port", "0", "--forward-to", "ftp://example.com/hook"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--forward-to");
    expect(result.stderr).toContain("ftp://example.com/hook");
  });
});
