import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AnswerPlan } from "../../src/receiver/answer-plan.js";
import { createForwarder, type Forwarder } from "../../src/receiver/forward.js";
import type { ReceivedRequest } from "../../src/receiver/received-request.js";
import { startReceiver, type Receiver } from "../../src/receiver/server.js";
import { VirtualClock } from "../../src/util/clock.js";
import { startServer, type TestServer } from "../helpers/http-server.js";

const BODY = JSON.stringify({ version: 1, type: "track", userId: "u1", event: "Signed Up", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

/** An app that takes every request and never answers. */
async function silentApp(): Promise<TestServer> {
  const app = await startServer(() => {});
  opened.push(app);
  return app;
}

/** Sends `head` and the first half of the body on a raw connection; `finish()` sends the rest and resolves with the whole answer. */
async function halfSent(url: string): Promise<{ finish: () => Promise<string> }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  let answer = "";
  socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
  const ended = new Promise<string>((resolve) => socket.once("close", () => resolve(answer)));
  const half = Math.floor(BODY.length / 2);
  socket.write(`POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY.slice(0, half)}`);
  return {
    finish: () => {
      socket.end(BODY.slice(half));
      return ended;
    },
  };
}

describe("stopping a receiver that relays (listen --forward-to)", () => {
  it("a forwarder's close() interrupts its relays in flight: listen's 503 with Retry-After", async () => {
    const app = await silentApp();
    const forwarder: Forwarder = createForwarder(app.url, { timeoutMs: 60_000 });
    const pending = forwarder.forward({ method: "POST", rawHeaders: ["Content-Type", "application/json"], body: Buffer.from(BODY) });
    await expect.poll(() => app.requests.length).toBe(1);

    await forwarder.close();
    // "interrupted", not "timeout": close() ended the relay, not its 60 s deadline (which the test's timeout would meet first).
    expect(await pending).toMatchObject({ status: 503, fromApp: false, error: "interrupted", headers: { "retry-after": "5" } });
    // A relay asked for after close() does not reach the app.
    expect(await forwarder.forward({ method: "POST", rawHeaders: [], body: Buffer.from(BODY) })).toMatchObject({ status: 503, error: "interrupted" });
    expect(app.requests).toHaveLength(1);
  });

  it("closes without waiting for the app: the relay in flight gets 503, a request completed during the stop too, both with Retry-After", async () => {
    const app = await silentApp();
    const forwarder = createForwarder(app.url, { timeoutMs: 60_000 });
    opened.push(forwarder);
    const statuses: (number | null)[] = [];
    const receiver: Receiver = await startReceiver({ port: 0, forward: forwarder.forward, onRequest: (request) => statuses.push(request.status) });
    opened.push(receiver);

    const late = await halfSent(receiver.url);
    const relayed = fetch(`${receiver.url}/hooks`, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
    await expect.poll(() => app.requests.length).toBe(1);

    // Answers, not a clock: a close that waited for the app would leave the relay to its 1 s grace, which cuts the connection unanswered.
    const closed = receiver.close();
    const lateAnswer = await late.finish();
    await closed;

    const answer = await relayed;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(await answer.json()).toEqual({ error: "listen stopped before the app answered", reason: "interrupted" });
    expect(statuses).toEqual([503]);
    expect(lateAnswer).toMatch(/^HTTP\/1\.1 503 /);
    expect(lateAnswer.toLowerCase()).toContain("\r\nretry-after: 5\r\n");
  });

  it("a relay still held by --delay is interrupted by close(): 503, recorded as interrupted, and the app never gets it", async () => {
    const app = await startServer();
    opened.push(app);
    const forwarder = createForwarder(app.url, { timeoutMs: 60_000 });
    opened.push(forwarder);
    // A clock that never moves: the 60 s delay ends only if close() cuts it.
    const clock = new VirtualClock(Date.now());
    const reported: ReceivedRequest[] = [];
    let recorded = "";
    const receiver = await startReceiver({
      port: 0,
      clock,
      answerPlan: new AnswerPlan({ delayMs: 60_000 }),
      forward: forwarder.forward,
      recording: { append: (lines) => (recorded += lines) },
      onRequest: (request) => reported.push(request),
    });
    opened.push(receiver);
    const relayed = fetch(`${receiver.url}/hooks`, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
    // Held: the delay is the clock's one timer.
    await expect.poll(() => clock.pending).toBe(1);

    await receiver.close();
    const answer = await relayed;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(app.requests).toHaveLength(0);
    expect(reported.map((request) => [request.status, request.forwarded?.error])).toEqual([[503, "interrupted"]]);
    expect(JSON.parse(recorded.trim()).response).toMatchObject({ status: null, error: "interrupted" });
  });
});
