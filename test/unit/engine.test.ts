import { describe, expect, it } from "vitest";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import type { DeliveryOptions } from "../../src/delivery/deliver.js";
import type { AttemptEvent } from "../../src/delivery/types.js";
import { describeFailure } from "../../src/delivery/undici-transport.js";
import { answers, byUrl, FakeTransport, VirtualClock, seededRandom, type FakeResponder } from "../../src/testing.js";

const BODY = JSON.stringify({ version: 1, type: "track", userId: "u_1", event: "Signed Up", timestamp: "2024-01-01T00:00:00.000Z" });
const A = "http://a.test/hook";
const B = "http://b.test/hook";

function setup(respond: FakeResponder, urls = [A], options: Partial<DeliveryOptions> = {}, autoAdvance = true) {
  const clock = new VirtualClock(1_000_000, { autoAdvance });
  const transport = new FakeTransport({ clock, respond });
  const engine = new DeliveryEngine(
    { targets: urls.map((url) => ({ url, headers: {} })), secret: "k", userAgent: "Segment.io/1.0" },
    { clock, random: () => 1, transport, ...options },
  );
  return { clock, transport, engine };
}

describe("DeliveryEngine on a fake transport (virtual time)", () => {
  it("follows the retry schedule: waits 1, 2, 4… s, capped at 5 min, nothing after the 4 h window", async () => {
    const { engine, transport } = setup(answers(500));
    const result = await engine.deliver(BODY);
    expect(result).toMatchObject({ delivered: false, interrupted: false });
    const starts = transport.requests.map((r) => r.at);
    // 1 + 9 doubling + 46 capped retries, as the pure policy says.
    expect(starts).toHaveLength(56);
    const gaps = starts.slice(1).map((t, i) => t - (starts[i] as number));
    expect(gaps.slice(0, 10)).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000]);
    expect(new Set(gaps.slice(9))).toEqual(new Set([300_000]));
    expect((starts.at(-1) as number) - 1_000_000).toBeLessThanOrEqual(4 * 3600 * 1000);
    expect(result.urls[0]?.error).toBe("HTTP 500; retry window closed");
  });

  it("jitter: each wait is random × the cap", async () => {
    const { engine, transport } = setup(answers(503, 503, 503, 200), [A], { random: () => 0.5 });
    await engine.deliver(BODY);
    const starts = transport.requests.map((r) => r.at);
    expect(starts.slice(1).map((t, i) => t - (starts[i] as number))).toEqual([500, 1000, 2000]);
  });

  it("a timeout is the engine's deadline: the attempt fails after timeoutMs and is retried", async () => {
    const { engine, transport } = setup(answers("hang", 200), [A], { timeoutMs: 700 });
    const events: AttemptEvent[] = [];
    const result = await engine.deliver(BODY, { onAttempt: (e) => events.push(e) });
    expect(result).toMatchObject({ delivered: true, rounds: 2 });
    expect(events[0]).toMatchObject({ outcome: { kind: "timeout" }, error: "timeout: no response within 700ms", ms: 700, retryInMs: 1000 });
    // The retry starts after the deadline plus the wait.
    expect((transport.requests[1]?.at ?? 0) - (transport.requests[0]?.at ?? 0)).toBe(1700);
  });

  it("Retry-After on 429/503 replaces the jittered wait; the largest of the round wins", async () => {
    const { engine, transport } = setup(
      byUrl({ [A]: answers({ status: 429, retryAfterMs: 30_000 }, 200), [B]: answers({ status: 503, retryAfterMs: 45_000 }, 500) }),
      [A, B],
      { random: () => 0 },
    );
    const result = await engine.deliver(BODY);
    expect(result.delivered).toBe(true);
    const atA = transport.requests.filter((r) => r.url === A).map((r) => r.at);
    expect(atA[1]! - atA[0]!).toBe(45_000);
  });

  it("a Retry-After past the window ends the delivery instead of waiting", async () => {
    const { engine, transport } = setup(answers({ status: 503, retryAfterMs: 120_000 }), [A], { retryWindowMs: 60_000 });
    const result = await engine.deliver(BODY);
    expect(transport.requests).toHaveLength(1);
    expect(result.urls[0]?.error).toMatch(/retry window closed/);
  });

  it("any-of: one URL answering 2xx delivers the message; the others are not retried", async () => {
    const { engine, transport } = setup(byUrl({ [A]: answers(500), [B]: answers(200) }), [A, B]);
    const result = await engine.deliver(BODY);
    expect(result).toMatchObject({ delivered: true, rounds: 1 });
    expect(transport.requests.map((r) => r.url)).toEqual([A, B]);
  });

  it("fan-out: every URL at once, and the round waits for the slowest answer", async () => {
    const { engine, transport, clock } = setup(byUrl({ [A]: answers({ status: 500, latencyMs: 300 }, 200), [B]: answers(404) }), [A, B]);
    const result = await engine.deliver(BODY);
    expect(result.delivered).toBe(true);
    const [a1, b1, a2] = transport.requests;
    expect(a1?.at).toBe(b1?.at);
    // B's 404 came at once; the retry of A waited for A's slow 500, then 1 s.
    expect(a2?.url).toBe(A);
    expect((a2?.at ?? 0) - (a1?.at ?? 0)).toBe(1300);
    expect(transport.requests).toHaveLength(3);
    expect(clock.now()).toBeGreaterThanOrEqual(1_001_300);
  });

  it("retries the retryable URLs together and drops the permanent ones", async () => {
    const { engine, transport } = setup(byUrl({ [A]: answers(503, 503, 200), [B]: answers(410) }), [A, B]);
    const result = await engine.deliver(BODY);
    expect(result.delivered).toBe(true);
    expect(transport.requests.filter((r) => r.url === B)).toHaveLength(1);
    expect(result.urls[1]).toMatchObject({ status: 410, attempts: 1 });
    expect(result.urls[0]).toMatchObject({ status: 200, attempts: 3 });
  });

  it("network errors are retried; TLS failures are permanent for their URL", async () => {
    const { engine, transport } = setup(byUrl({ [A]: answers({ network: "ECONNREFUSED" }, 200), [B]: answers({ tls: "DEPTH_ZERO_SELF_SIGNED_CERT" }) }), [
      A,
      B,
    ]);
    const result = await engine.deliver(BODY);
    expect(result.delivered).toBe(true);
    expect(transport.requests.filter((r) => r.url === B)).toHaveLength(1);
    expect(transport.requests.filter((r) => r.url === A)).toHaveLength(2);
  });

  it("abort during a retry wait resolves interrupted at once; an aborted signal sends nothing", async () => {
    // The clock never moves by itself: only the abort can end the wait.
    const { engine, transport } = setup(answers(500), [A], {}, false);
    const controller = new AbortController();
    const result = await engine.deliver(BODY, { signal: controller.signal, onAttempt: () => queueMicrotask(() => controller.abort("SIGINT")) });
    expect(result).toMatchObject({ delivered: false, interrupted: true, rounds: 1 });
    expect(transport.requests).toHaveLength(1);
    const again = await engine.deliver(BODY, { signal: controller.signal });
    expect(again).toMatchObject({ interrupted: true, rounds: 0 });
    expect(transport.requests).toHaveLength(1);
  });

  it("with cutAttempts, an abort cuts the attempt in flight: interrupted, nothing recorded as failed; without, the attempt runs to its answer", async () => {
    // The fake never answers and the clock never moves: only the abort can end the attempt.
    const { engine } = setup(() => "hang", [A], {}, false);
    const controller = new AbortController();
    const delivering = engine.deliver(BODY, { signal: controller.signal, cutAttempts: true });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort("SIGTERM");
    expect(await delivering).toMatchObject({ delivered: false, interrupted: true, rounds: 1, urls: [{ attempts: 0, error: null }] });

    const { engine: plain, clock } = setup(answers(200, 200), [A], {}, false);
    const stop = new AbortController();
    const answered = plain.deliver(BODY, { signal: stop.signal });
    stop.abort("SIGTERM");
    await clock.runAll();
    expect(await answered).toMatchObject({ delivered: true, interrupted: false });
  });

  it("keeps response headers and bodies only when the call asks", async () => {
    const { engine } = setup(answers({ status: 200, headers: { "x-id": "1" }, body: "ok" }));
    const plain: AttemptEvent[] = [];
    const kept: AttemptEvent[] = [];
    await engine.deliver(BODY, { onAttempt: (e) => plain.push(e) });
    await engine.deliver(BODY, { onAttempt: (e) => kept.push(e), keepResponse: true });
    expect(plain[0]?.response).toBeUndefined();
    expect(kept[0]?.response).toEqual({ headers: { "x-id": "1" }, body: "ok" });
  });

  it("resumes a window from firstAttemptAt; the same signed bytes on every attempt; close() closes the transport", async () => {
    const { engine, transport } = setup(answers(500), [A], { retryWindowMs: 60_000, random: seededRandom(3) });
    const result = await engine.deliver(BODY, { firstAttemptAt: 1_000_000 - 59_500 });
    expect(result.urls[0]?.attempts).toBe(1);
    await engine.deliver(BODY);
    expect(new Set(transport.requests.map((r) => `${r.headers["X-Signature"]} ${r.body}`)).size).toBe(1);
    await engine.close();
    expect(transport.closed).toBe(true);
  });
});

describe("TLS failures are worded by webhook-cli", () => {
  it("names the problem and --ca, and passes none of Node's advice through (Node 24 appends --use-system-ca)", () => {
    const node24 = Object.assign(new Error("self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca"), {
      code: "DEPTH_ZERO_SELF_SIGNED_CERT",
    });
    const node20 = Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    const wrapped = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET", cause: node24 });
    const worded = describeFailure(node24, "https://example.test:8443/hook");
    expect(worded.outcome).toEqual({ kind: "tls", code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    expect(worded.error).toBe(
      "TLS: the certificate of example.test:8443 is not trusted (self-signed certificate); nothing was sent. If it is signed by your own CA, pass it with --ca FILE",
    );
    expect(worded.error).not.toMatch(/use-system-ca|Node\.js/);
    expect(describeFailure(node20, "https://example.test:8443/hook").error).toBe(worded.error);
    expect(describeFailure(wrapped, "https://example.test:8443/hook").error).toBe(worded.error);
  });

  it("an untrusted issuer and a wrong host say so", () => {
    const issuer = Object.assign(new Error("unable to verify the first certificate"), { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    expect(describeFailure(issuer, "https://x.test/").error).toMatch(/not trusted \(issued by a CA that is not trusted\)/);
    const host = Object.assign(new Error("Hostname/IP does not match"), { code: "ERR_TLS_CERT_ALTNAME_INVALID" });
    expect(describeFailure(host, "https://x.test/").error).toMatch(/issued for another host name/);
  });

  it("captureResponse keeps each URL's final answer in the result, and only when asked", async () => {
    const json = { status: 200, headers: { "Content-Type": "application/json" }, body: '{"ok":true}' };
    const { engine } = setup(byUrl({ [A]: answers(503, json), [B]: answers({ status: 404, body: "gone" }) }), [A, B]);
    const captured = await engine.deliver(BODY, { captureResponse: true });
    expect(captured.urls.map((u) => u.response)).toEqual([
      { contentType: "application/json", body: { body: '{"ok":true}' } },
      { contentType: null, body: { body: "gone" } },
    ]);
    const plain = await setup(answers(json)).engine.deliver(BODY);
    expect(plain.urls[0]).not.toHaveProperty("response");
  });
});

describe("DeliveryEngine: a recorded batch", () => {
  it("signs its element 0 (the rule it was recorded under) and sends the whole body", async () => {
    const { engine, transport } = setup(answers(200));
    const batch = `[${BODY},{"type":"track"}]`;
    await engine.deliver(batch, { recorded: { method: "POST", rule: "first-element" } });
    const { createHmac } = await import("node:crypto");
    expect(String(transport.requests[0]?.body)).toBe(batch);
    expect(transport.requests[0]?.headers["X-Signature"]).toBe(createHmac("sha1", "k").update(BODY).digest("hex"));
  });
});
