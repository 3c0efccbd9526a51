import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { startInProcess, type InProcessResult } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const SECRET = "e2e-stop-secret";
const BODY = JSON.stringify({ version: 1, type: "track", userId: "ada", event: "Signed Up", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const SIGNATURE = createHmac("sha1", SECRET).update(BODY).digest("hex");
/** The bound is 1 s from the signal; the rest is the process's own start-up noise. */
const STOPPED_WITHIN_MS = 1_500;

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

async function listen(args: string[]): Promise<{ url: string; stop: () => Promise<{ result: InProcessResult; ms: number }> }> {
  const run = startInProcess(["listen", "--port", "0", "--secret", SECRET, ...args]);
  const [, url] = await run.waitFor(/(?:Listening on |"url":")(http[^"\s]+)/, 15_000);
  return {
    url: url as string,
    stop: async () => {
      const started = Date.now();
      run.stop("SIGTERM");
      const result = await run.done;
      return { result, ms: Date.now() - started };
    },
  };
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("listen stops within a second of SIGTERM, answering what is in flight", () => {
  it("interrupts a --forward-to relay the app never answers: 503 with Retry-After, recorded as interrupted", async () => {
    const app = await server(() => {}); // takes the request, never answers
    const recording = `${files.dir}/interrupted.ndjson`;
    const { url, stop } = await listen(["--forward-to", app.url, "--forward-timeout", "60s", "--record", recording, "--json"]);
    const answer = post(`${url}/hooks`);
    await until(() => app.requests.length === 1);

    const { result, ms } = await stop();
    expect(ms).toBeLessThan(STOPPED_WITHIN_MS);
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

  it("interrupts a relay still held by --delay: the app never gets it", async () => {
    const app = await server();
    const recording = `${files.dir}/delayed-relay.ndjson`;
    const { url, stop } = await listen(["--forward-to", app.url, "--delay", "60s", "--record", recording]);
    const answer = post(`${url}/hooks`);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const { result, ms } = await stop();
    expect(ms).toBeLessThan(STOPPED_WITHIN_MS);
    expect(result.stdout).toContain("→ 503: interrupted");
    const sender = await answer;
    expect(sender.status).toBe(503);
    expect(sender.headers["retry-after"]).toBeDefined();
    expect(app.requests).toHaveLength(0);
    expect(JSON.parse(readFileSync(recording, "utf8").trim()).response).toMatchObject({ status: null, error: "interrupted" });
  });

  it("sends an answer held by --delay at once", async () => {
    const { url, stop } = await listen(["--delay", "60s"]);
    const answer = post(`${url}/hooks`);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const { result, ms } = await stop();
    expect(ms).toBeLessThan(STOPPED_WITHIN_MS);
    expect(result.code).toBe(0);
    expect(await answer).toMatchObject({ status: 200, body: '{"ok":true}' });
  });

  it("sends at once the answer to the --count-th request still held by --delay", async () => {
    // Reaching --count lets a held answer take its time; a signal meanwhile does not wait for it.
    const { url, stop } = await listen(["--delay", "60s", "--count", "1"]);
    const answer = post(`${url}/hooks`);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const { result, ms } = await stop();
    expect(ms).toBeLessThan(STOPPED_WITHIN_MS);
    expect(result.code).toBe(0);
    expect(await answer).toMatchObject({ status: 200, body: '{"ok":true}' });
  });

  it("cuts a request held by --script timeout", async () => {
    const { url, stop } = await listen(["--script", "timeout"]);
    const answer = post(`${url}/hooks`).catch((error: NodeJS.ErrnoException) => error.code);
    await new Promise((resolve) => setTimeout(resolve, 300));

    const { ms } = await stop();
    expect(ms).toBeLessThan(STOPPED_WITHIN_MS);
    // Held means no answer: the connection is closed.
    expect(await answer).toBe("ECONNRESET");
  });
});
