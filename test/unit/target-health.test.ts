import { describe, expect, it } from "vitest";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import { MemoryQueue } from "../../src/serve/queue/memory-queue.js";
import { QUIET_MS, TargetHealth, type TargetChange } from "../../src/serve/target-health.js";
import { DeliveryWorker } from "../../src/serve/worker.js";
import { FakeTransport, VirtualClock } from "../../src/testing.js";

// serve's failing and recovered lines (docs/serve-api.md#output), in virtual time.
const A = "http://a.test/hook";
const B = "http://b.test/hook";

function watch(clock: VirtualClock): { health: TargetHealth; told: (TargetChange & { at: number })[] } {
  const told: (TargetChange & { at: number })[] = [];
  return { health: new TargetHealth(clock, (change) => told.push({ ...change, at: clock.now() })), told };
}

describe("TargetHealth", () => {
  it("tells failing at the first failed attempt and recovered at the first success, once each however many attempts fail", async () => {
    const clock = new VirtualClock(1_000);
    const { health, told } = watch(clock);
    health.attempt(A, null);
    expect(told).toEqual([]);
    health.attempt(A, "HTTP 503");
    for (let i = 0; i < 500; i++) {
      await clock.advance(100);
      health.attempt(A, i % 2 === 0 ? "HTTP 503" : "timeout: no response within 5.0s");
    }
    health.attempt(A, null);
    health.attempt(A, null);
    expect(told).toEqual([
      { state: "failing", url: A, error: "HTTP 503", at: 1_000 },
      { state: "recovered", url: A, failedAttempts: 501, downMs: 50_000, at: 51_000 },
    ]);
  });

  it("each URL on its own", () => {
    const clock = new VirtualClock(0);
    const { health, told } = watch(clock);
    health.attempt(A, "HTTP 503");
    health.attempt(B, null);
    health.attempt(B, "network: connection refused (ECONNREFUSED)");
    health.attempt(A, "HTTP 503");
    expect(told.map((change) => [change.state, change.url])).toEqual([
      ["failing", A],
      ["failing", B],
    ]);
  });

  it("a URL that flaps: a failing line at most every 30 s, a blip in between untold, a failure still there at the end of the 30 s told then", async () => {
    const clock = new VirtualClock(0);
    const { health, told } = watch(clock);
    health.attempt(A, "HTTP 500");
    await clock.advance(1_000);
    health.attempt(A, null);
    // Failing again within 30 s of the first line, and well again before they are up: not told.
    await clock.advance(1_000);
    health.attempt(A, "HTTP 502");
    await clock.advance(1_000);
    health.attempt(A, null);
    // Failing again, and still failing when the 30 s are up: told then, with the latest error.
    await clock.advance(5_000);
    health.attempt(A, "HTTP 503");
    await clock.advance(1_000);
    health.attempt(A, "HTTP 504");
    await clock.advance(QUIET_MS);
    health.attempt(A, null);
    expect(told).toEqual([
      { state: "failing", url: A, error: "HTTP 500", at: 0 },
      { state: "recovered", url: A, failedAttempts: 1, downMs: 1_000, at: 1_000 },
      { state: "failing", url: A, error: "HTTP 504", at: QUIET_MS },
      { state: "recovered", url: A, failedAttempts: 2, downMs: 31_000, at: 39_000 },
    ]);
  });

  it("tells nothing once closed (serve stopping), its pending look included", async () => {
    const clock = new VirtualClock(0);
    const { health, told } = watch(clock);
    health.attempt(A, "HTTP 500");
    health.attempt(A, null);
    health.attempt(A, "HTTP 500");
    health.close();
    await clock.advance(QUIET_MS * 2);
    health.attempt(A, null);
    expect(told.map((change) => change.state)).toEqual(["failing", "recovered"]);
    expect(clock.pending).toBe(0);
  });
});

describe("serve's worker tells its attempts", () => {
  it("a burst of 50 messages to a URL down for 2 minutes: one failing line, one recovered line", async () => {
    const clock = new VirtualClock(0, { autoAdvance: true });
    const transport = new FakeTransport({ clock, respond: () => (clock.now() < 120_000 ? { status: 503, body: "down for maintenance" } : 200) });
    const engine = new DeliveryEngine({ targets: [{ url: A, headers: {} }], secret: undefined, userAgent: "t" }, { clock, transport, random: () => 1 });
    const queue = new MemoryQueue();
    const { health, told } = watch(clock);
    const worker = new DeliveryWorker({ queue, engine, concurrency: 64, clock, onAttempt: (event) => health.attempt(event.url, event.error) });
    queue.enqueue(Array.from({ length: 50 }, (_, i) => ({ body: JSON.stringify({ type: "track", userId: `u${i}`, event: "E" }), source: "web" })));
    worker.start();
    while (worker.delivered < 50) await new Promise((resolve) => setImmediate(resolve));
    await worker.stop();
    expect(transport.requests.length).toBeGreaterThan(300);
    expect(told.map(({ state, at }) => [state, at >= 120_000])).toEqual([
      ["failing", false],
      ["recovered", true],
    ]);
    expect(told[0]).toMatchObject({ error: "HTTP 503" });
  });
});
