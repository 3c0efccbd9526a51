import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { startInProcess, type InProcessResult } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const SECRET = "e2e-stop-secret";
const BODY = JSON.stringify({ version: 1, type: "track", userId: "ada", event: "Signed Up", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const SIGNATURE = createHmac("sha1", SECRET).update(BODY).digest("hex");

const { server } = closeServersAfterEach();
const files = tempDir("webhook-cli-e2e-stop-");

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function post(url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", "x-signature": SIGNATURE } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(BODY);
  });
}

/**
 * listen in this process; `received()` resolves once it has taken a request (its `--json` request
 * event, written as the request is decided: before a --delay, a hold or a relay's answer).
 */
async function listen(args: string[]): Promise<{ url: string; received: () => Promise<unknown>; stop: () => Promise<InProcessResult> }> {
  const run = startInProcess(["listen", "--port", "0", "--secret", SECRET, ...args]);
  const [, url] = await run.waitFor(/(?:Listening on |"url":")(http[^"\s]+)/, 15_000);
  return {
    url: url as string,
    received: () => run.waitFor(/"event":"request"/),
    stop: () => {
      run.stop("SIGTERM");
      return run.done;
    },
  };
}

/*
 * What listen holds here would take 60 s (--delay, --forward-timeout, a `timeout` hold): a stop that
 * waited for it would not end within the test's 30 s. So an answer that arrives, and a stop that ends,
 * show the stop cut what was held; no wall-clock bound is needed (one would depend on the machine's load).
 * A relay held by --delay, which shows nothing until it is answered: test/integration/receiver-stop.test.ts.
 */
describe("listen stops at SIGTERM without waiting for what it holds, answering what is in flight", () => {
  it("interrupts a --forward-to relay the app never answers: 503 with Retry-After, recorded as interrupted", async () => {
    const app = await server(() => {}); // takes the request, never answers
    const recording = `${files.dir}/interrupted.ndjson`;
    const { url, stop } = await listen(["--forward-to", app.url, "--forward-timeout", "60s", "--record", recording, "--json"]);
    const answer = post(`${url}/hooks`);
    await expect.poll(() => app.requests.length).toBe(1);

    const result = await stop();
    expect(result.code).toBe(0);
    const sender = await answer;
    expect(sender.status).toBe(503);
    expect(Number(sender.headers["retry-after"])).toBeGreaterThan(0);
    expect(JSON.parse(sender.body)).toEqual({ error: "listen stopped before the app answered", reason: "interrupted" });

    const line = JSON.parse(readFileSync(recording, "utf8").trim()) as { response: Record<string, unknown>; signatureValid: boolean };
    expect(line.signatureValid).toBe(true);
    expect(line.response).toEqual({ status: null, ms: expect.any(Number), error: "interrupted" });
    const events = result.stdout
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(events.find((event) => event["event"] === "request")).toMatchObject({ status: 503, app: { status: null, error: "interrupted" } });
  });

  it("shows and records an interrupted relay: `→ 503: interrupted`", async () => {
    const app = await server(() => {}); // takes the request, never answers
    const recording = `${files.dir}/interrupted-lines.ndjson`;
    const { url, stop } = await listen(["--forward-to", app.url, "--forward-timeout", "60s", "--record", recording]);
    const answer = post(`${url}/hooks`);
    await expect.poll(() => app.requests.length).toBe(1);

    const result = await stop();
    expect(result.stdout).toContain("→ 503: interrupted");
    const sender = await answer;
    expect(sender.status).toBe(503);
    expect(sender.headers["retry-after"]).toBeDefined();
    expect(JSON.parse(readFileSync(recording, "utf8").trim()).response).toMatchObject({ status: null, error: "interrupted" });
  });

  it("sends an answer held by --delay at once", async () => {
    const { url, received, stop } = await listen(["--delay", "60s", "--json"]);
    const answer = post(`${url}/hooks`);
    await received();

    const result = await stop();
    expect(result.code).toBe(0);
    expect(await answer).toMatchObject({ status: 200, body: '{"ok":true}' });
  });

  it("sends at once the answer to the --count-th request still held by --delay", async () => {
    // Reaching --count lets a held answer take its time; a signal meanwhile does not wait for it.
    const { url, received, stop } = await listen(["--delay", "60s", "--count", "1", "--json"]);
    const answer = post(`${url}/hooks`);
    await received();

    const result = await stop();
    expect(result.code).toBe(0);
    expect(await answer).toMatchObject({ status: 200, body: '{"ok":true}' });
  });

  it("cuts a request held by --script timeout", async () => {
    const { url, received, stop } = await listen(["--script", "timeout", "--json"]);
    const answer = post(`${url}/hooks`).catch((error: NodeJS.ErrnoException) => error.code);
    await received();

    const result = await stop();
    expect(result.code).toBe(0);
    // Held means no answer: the connection is closed.
    expect(await answer).toBe("ECONNRESET");
  });
});
