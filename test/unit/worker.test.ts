import { describe, expect, it } from "vitest";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import { MemoryQueue } from "../../src/serve/queue/memory-queue.js";
import { DeliveryWorker } from "../../src/serve/worker.js";
import { FakeTransport, VirtualClock } from "../../src/testing.js";

describe("serve's worker on the dispatcher (virtual time)", () => {
  it("counts identical bodies waiting to retry as two messages, keeps no response bodies, claims on notify, leaves interrupted ones pending", async () => {
    const clock = new VirtualClock(0);
    let requests = 0;
    // The first two requests fail (one per copy of the body), the rest succeed.
    const transport = new FakeTransport({ clock, respond: () => (++requests <= 2 ? 503 : 200) });
    const engine = new DeliveryEngine(
      { targets: [{ url: "http://hook.test/", headers: {} }], secret: undefined, userAgent: "t" },
      { clock, transport, random: () => 1 },
    );
    const queue = new MemoryQueue();
    const settled: number[] = [];
    const worker = new DeliveryWorker({ queue, engine, concurrency: 4, clock, onSettled: (message) => settled.push(message.id) });
    const body = JSON.stringify({ type: "track", userId: "same", event: "E" });
    queue.enqueue([
      { body, source: "web" },
      { body, source: "web" },
    ]);
    worker.start();
    await clock.advance(0);
    // Both wait for their retry: per-message hooks, no map from bodies back to messages.
    expect(worker.retrying).toBe(2);
    expect(transport.requests.every((r) => !r.keepResponse)).toBe(true);

    // A message queued later is claimed without polling.
    queue.enqueue([{ body: JSON.stringify({ type: "track", userId: "later", event: "E" }), source: "web" }]);
    worker.notify();
    await clock.advance(0);
    expect(transport.requests).toHaveLength(3);

    await worker.stop();
    // The later one was delivered; the two waiting to retry were interrupted and stay pending.
    expect(settled).toEqual([3]);
    expect(queue.pendingCount()).toBe(2);
    expect([worker.delivered, worker.failed]).toEqual([1, 0]);
  });

  it("delivers, gives up on permanent failures with the URL named, and settles each once", async () => {
    const clock = new VirtualClock(0, { autoAdvance: true });
    const transport = new FakeTransport({ clock, respond: (request) => (request.body.toString().includes("bad") ? 400 : 200) });
    const engine = new DeliveryEngine({ targets: [{ url: "http://hook.test/", headers: {} }], secret: undefined, userAgent: "t" }, { clock, transport });
    const queue = new MemoryQueue();
    const worker = new DeliveryWorker({ queue, engine, concurrency: 2, clock });
    queue.enqueue(["ok1", "bad", "ok2"].map((id) => ({ body: JSON.stringify({ id }), source: "web" })));
    worker.start();
    while (worker.delivered + worker.failed < 3) await new Promise((resolve) => setImmediate(resolve));
    await worker.stop();
    expect([worker.delivered, worker.failed]).toEqual([2, 1]);
    expect(queue.listFailed().map((f) => f.failure)).toEqual([{ reason: "http://hook.test/: HTTP 400", attempts: 1, status: 400 }]);
  });
});
