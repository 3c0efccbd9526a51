import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryEngine } from "../../src/delivery/deliver.js";
import { undiciEngine, type UndiciEngineOptions } from "../../src/delivery/undici-engine.js";
import { WebhookCliError } from "../../src/errors.js";
import { buildExamples } from "../../src/messages/examples.js";
import { MESSAGE_TYPES } from "../../src/messages/schemas.js";
import { AnswerPlan, parseScript } from "../../src/receiver/answer-plan.js";
import { RecordingFile } from "../../src/receiver/record.js";
import type { ReceivedRequest } from "../../src/receiver/received-request.js";
import { startReceiver, type Receiver, type ReceiverOptions } from "../../src/receiver/server.js";
import { seededRandom, VirtualClock } from "../../src/util/clock.js";
import { sendRaw } from "../helpers/hostile-requests.js";
import { generateCertificates, type TestCertificates } from "../helpers/tls.js";

// No signature header of any scheme: the message names every header looked for (docs/schemes.md#recognition).
const MISSING_SIGNATURE =
  "missing X-Signature header (nor any other scheme's: looked for webhook-signature, svix-signature, X-Hub-Signature-256, Stripe-Signature, X-Shopify-Hmac-Sha256, X-Slack-Signature, X-Twilio-Signature)";

const SECRET = "integration-secret";
// Computed with node:crypto here, independently of src/signing/x-signature.ts.
const hmac = (body: string | Buffer, secret = SECRET, algorithm = "sha1") => createHmac(algorithm, secret).update(body).digest("hex");
const track = JSON.stringify({
  version: 1,
  type: "track",
  userId: "u1",
  event: "Signed Up",
  properties: { plan: "pro" },
  timestamp: "2024-01-01T00:00:00.000Z",
});

const receivers: Receiver[] = [];
const engines: DeliveryEngine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function receiver(options: ReceiverOptions = {}): Promise<{ receiver: Receiver; events: ReceivedRequest[] }> {
  const events: ReceivedRequest[] = [];
  const started = await startReceiver({ port: 0, secret: SECRET, ...options, onRequest: (e) => events.push(e) });
  receivers.push(started);
  return { receiver: started, events };
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const text = await response.body.text();
  return { status: response.statusCode, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

function engine(url: string, options: UndiciEngineOptions = {}, secret: string | undefined = SECRET): DeliveryEngine {
  // random 0: retries follow at once, so the schedule costs no test time.
  const created = undiciEngine(
    { targets: [{ url, headers: {} }], secret, userAgent: "Segment.io/1.0" },
    { random: () => 0, retryWindowMs: 10_000, ...options },
  );
  engines.push(created);
  return created;
}

describe("listen's receiver over real HTTP", () => {
  it("answers 200 to a valid signature and 401 with a short JSON reason to a wrong or missing one", async () => {
    const { receiver: r, events } = await receiver();
    expect(await post(`${r.url}/hooks/a`, track, { "x-signature": hmac(track) })).toMatchObject({ status: 200, json: { ok: true } });
    const wrong = await post(`${r.url}/b`, track, { "x-signature": hmac(track, "other-secret") });
    expect(wrong).toMatchObject({ status: 401, json: { error: "X-Signature does not match the body" } });
    const missing = await post(`${r.url}/c`, track);
    expect(missing).toMatchObject({ status: 401, json: { error: MISSING_SIGNATURE } });
    expect(events.map((e) => [e.index, e.path, e.verdict.signatureValid, e.status, e.verdict.valid])).toEqual([
      [1, "/hooks/a", true, 200, true],
      [2, "/b", false, 401, false],
      [3, "/c", false, 401, false],
    ]);
  });

  it("without a secret accepts everything, marked unsigned", async () => {
    const { receiver: r, events } = await receiver({ secret: undefined });
    expect((await post(r.url, track, { "x-signature": "junk" })).status).toBe(200);
    expect(events[0]?.verdict).toMatchObject({ signatureValid: null, valid: true });
  });

  it("puts the diagnosis in the event and the 401 answer", async () => {
    const { receiver: r, events } = await receiver();
    const answer = await post(r.url, track, { "x-signature": hmac(track, SECRET, "sha256") });
    expect(answer.status).toBe(401);
    expect(answer.json?.["hint"]).toBe("signed with HMAC-SHA256 instead of HMAC-SHA1");
    expect(events[0]?.verdict.diagnosis?.cause).toBe("sha256");
  });

  it("reports a shape error by key, while the answer follows the signature rule", async () => {
    const { receiver: r, events } = await receiver();
    const body = JSON.stringify({ version: 1, type: "group", userId: "u1", traits: {}, timestamp: "2024-01-01T00:00:00.000Z" });
    expect((await post(r.url, body, { "x-signature": hmac(body) })).status).toBe(200);
    expect(events[0]?.verdict).toMatchObject({
      signatureValid: true,
      valid: false,
      shapeErrors: [{ key: "groupId", message: 'missing required key "groupId"' }],
    });
  });

  it("records each POST before answering: exact bytes, redacted credentials, no secret", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webhook-cli-listen-"));
    dirs.push(dir);
    const path = join(dir, "rec.ndjson");
    const recording = RecordingFile.open(path);
    const { receiver: r } = await receiver({ recording });
    const spaced = '{ "version": 1, "type": "delete", "userId": "u9", "timestamp": "2024-01-01T00:00:00.000Z" }';
    await post(`${r.url}/one`, track, { "x-signature": hmac(track), authorization: "Bearer tok", cookie: "a=b", "x-copy": SECRET });
    // Read right after the answer: the line must already be there.
    expect(readFileSync(path, "utf8").split("\n")).toHaveLength(2);
    await post(`${r.url}/two`, spaced, { "x-signature": "bad" });
    recording.close();
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain(SECRET);
    const [first, second] = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ method: "POST", path: "/one", signatureValid: true, body: JSON.parse(track) });
    expect(first?.["rawBody"]).toBeUndefined();
    expect(first?.["headers"]).toMatchObject({ authorization: "[redacted]", cookie: "[redacted]", "x-copy": "[redacted]", "x-signature": hmac(track) });
    expect(Number.isNaN(Date.parse(first?.["receivedAt"] as string))).toBe(false);
    expect(second).toMatchObject({ path: "/two", signatureValid: false, body: JSON.parse(spaced) });
    expect(Buffer.from(second?.["rawBody"] as string, "base64").toString()).toBe(spaced);
  });

  it("answers 413 to a body over 1 MiB without buffering it, and keeps answering", async () => {
    const { receiver: r, events } = await receiver();
    const big = Buffer.alloc(2 * 1024 * 1024, 0x61);
    expect((await post(r.url, big)).status).toBe(413);
    // Chunked, no Content-Length: cut off while streaming.
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(r.url, { method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      for (let i = 0; i < 24; i++) req.write(Buffer.alloc(64 * 1024, 0x62));
      req.end();
    });
    expect(chunked).toBe(413);
    expect((await post(r.url, track, { "x-signature": hmac(track) })).status).toBe(200);
    expect(events.map((e) => [e.status, e.verdict.valid])).toEqual([
      [413, false],
      [413, false],
      [200, true],
    ]);
    expect(events[0]?.verdict.shapeErrors[0]?.message).toMatch(/over 1048576 bytes/);
  });

  it("survives a garbage request line; answers 405 to other methods and reports them as invalid requests (not hidden)", async () => {
    const { receiver: r, events } = await receiver();
    const reply = await new Promise<string>((resolve) => {
      const socket = connect(r.port, "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
      let data = "";
      socket.on("data", (chunk) => (data += chunk.toString()));
      socket.on("close", () => resolve(data));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
    const get = await request(r.url, { method: "GET" });
    await get.body.dump();
    expect(get.statusCode).toBe(405);
    expect(get.headers["allow"]).toBe("POST, PUT, PATCH");
    expect((await post(r.url, track, { "x-signature": hmac(track) })).status).toBe(200);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ method: "GET", path: "/", status: 405, verdict: { valid: false } });
    expect(events[1]).toMatchObject({ method: "POST", status: 200 });
  });

  it("answers 400 to a request-target that is not a path (glued to its URL it names another host), shown as invalid", async () => {
    const { receiver: r, events } = await receiver();
    const targets = [
      ["POST", "*@127.0.0.1:9/x"],
      ["POST", "http://evil.example/x"],
      ["OPTIONS", "*"],
      ["GET", `http://127.0.0.1:${r.port}/health`],
    ] as const;
    for (const [method, target] of targets) {
      const body = method === "POST" ? track : "";
      const head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${r.port}\r\nX-Signature: ${hmac(track)}\r\nContent-Length: ${body.length}\r\n\r\n`;
      const answer = await sendRaw(r.port, Buffer.from(head + body));
      expect(answer, target).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)), target).toEqual({ error: expect.stringContaining("origin-form") });
    }
    expect(events.map((e) => [e.method, e.path, e.status, e.verdict.valid, e.verdict.shapeErrors[0]?.key])).toEqual(
      targets.map(([method, target]) => [method, target, 400, false, "(request-target)"]),
    );
    // A path that merely looks odd is still a path.
    expect((await post(`${r.url}//evil.example/x`, track, { "x-signature": hmac(track) })).status).toBe(200);
  });

  it("refuses a port in use with a PortError naming it", async () => {
    const { receiver: r } = await receiver();
    const error = await startReceiver({ port: r.port }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookCliError);
    expect((error as WebhookCliError).code).toBe("E_PORT");
    expect((error as WebhookCliError).message).toContain(`127.0.0.1:${r.port}`);
    expect((error as WebhookCliError).message).toContain("EADDRINUSE");
  });
});

describe("fault injection, driven by the delivery engine", () => {
  it("--respond sets the status of normal answers", async () => {
    const { receiver: r } = await receiver({ answerPlan: new AnswerPlan({ respond: 202 }) });
    expect((await post(r.url, track, { "x-signature": hmac(track) })).status).toBe(202);
  });

  it("--fail-first 2 with --fail-status 500: the engine delivers on the third attempt; verdicts unchanged", async () => {
    const { receiver: r, events } = await receiver({ answerPlan: new AnswerPlan({ failFirst: 2, failStatus: 500 }) });
    const result = await engine(r.url).deliver(track);
    expect(result).toMatchObject({ delivered: true, rounds: 3 });
    expect(events.map((e) => [e.status, e.injected, e.verdict.valid])).toEqual([
      [500, true, true],
      [500, true, true],
      [200, false, true],
    ]);
  });

  it("--fail-rate with --seed fails the same requests on every run", async () => {
    const run = async () => {
      const { receiver: r } = await receiver({ answerPlan: new AnswerPlan({ failRate: 0.5, random: seededRandom(7) }) });
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) statuses.push((await post(r.url, track, { "x-signature": hmac(track) })).status);
      return statuses;
    };
    const first = await run();
    const expected = Array.from(
      { length: 16 },
      (
        (random) => () =>
          random() < 0.5 ? 503 : 200
      )(seededRandom(7)),
    );
    expect(first).toEqual(expected);
    expect(await run()).toEqual(first);
    expect(new Set(first)).toEqual(new Set([200, 503]));
  });

  it("--delay holds every answer", async () => {
    // The delay runs on this clock: the answer goes out when the test moves it 300 ms, not before.
    const clock = new VirtualClock(Date.now());
    const { receiver: r, events } = await receiver({ answerPlan: new AnswerPlan({ delayMs: 300 }), clock });
    const answer = post(r.url, track, { "x-signature": hmac(track) });
    await expect.poll(() => clock.pending).toBe(1);
    expect(events.map((e) => e.status)).toEqual([200]);
    await clock.advance(299);
    expect(clock.pending).toBe(1);
    await clock.advance(1);
    expect((await answer).status).toBe(200);
  });

  it("--script 503,timeout,drop,200: the engine sees a 503, a timeout, a dropped connection, then delivers", async () => {
    const { receiver: r, events } = await receiver({ answerPlan: new AnswerPlan({ script: parseScript("503,timeout,drop,200") }) });
    const attempts: string[] = [];
    const result = await engine(r.url, { timeoutMs: 400 }).deliver(track, {
      onAttempt: (a) => attempts.push(a.outcome.kind === "status" ? String(a.outcome.status) : a.outcome.kind),
    });
    expect(result).toMatchObject({ delivered: true, rounds: 4 });
    expect(attempts).toEqual(["503", "timeout", "network", "200"]);
    expect(events.map((e) => e.fault ?? e.status)).toEqual([503, "timeout", "drop", 200]);
    expect(events.every((e) => e.verdict.valid)).toBe(true);
  });
});

describe("HTTPS and the round trip", () => {
  let certs: TestCertificates;
  beforeAll(() => {
    certs = generateCertificates();
  });
  afterAll(() => rmSync(certs.dir, { recursive: true, force: true }));

  it("serves HTTPS with a generated certificate; a client trusting the CA gets through", async () => {
    const { receiver: r, events } = await receiver({ tls: { cert: certs.cert, key: certs.key } });
    expect(r.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const dispatcher = new Agent({ connect: { ca: certs.caCert } });
    const response = await request(r.url, { method: "POST", body: track, headers: { "x-signature": hmac(track) }, dispatcher });
    await response.body.dump();
    await dispatcher.close();
    expect(response.statusCode).toBe(200);
    const result = await engine(r.url, { ca: [certs.caCert] }).deliver(track);
    expect(result.delivered).toBe(true);
    expect(events.map((e) => e.verdict.signatureValid)).toEqual([true, true]);
  });

  it("all seven message types sent through the delivery engine arrive verified and well-formed", async () => {
    const { receiver: r, events } = await receiver({ strict: true });
    const delivery = engine(`${r.url}/webhook`);
    const messages = buildExamples(MESSAGE_TYPES, { seed: 11 });
    for (const message of messages) expect((await delivery.deliver(JSON.stringify(message))).delivered).toBe(true);
    expect(events.map((e) => e.verdict.type)).toEqual([...MESSAGE_TYPES]);
    for (const [i, e] of events.entries()) {
      expect(e.verdict).toMatchObject({ signatureValid: true, valid: true, shapeErrors: [], shapeWarnings: [] });
      expect(e.verdict.body).toEqual(messages[i]);
      expect(e.headers["user-agent"]).toBe("Segment.io/1.0");
    }
  });
});
