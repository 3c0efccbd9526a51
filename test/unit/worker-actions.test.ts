import { describe, expect, it } from "vitest";
import type { Target } from "../../src/config/destination.js";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import { MemoryQueue } from "../../src/serve/queue/memory-queue.js";
import { DeliveryWorker, forwardingBatches } from "../../src/serve/worker.js";
import { FakeTransport, VirtualClock, type FakeResponder } from "../../src/testing.js";

/** serve's worker with Webhooks (Actions) batches, in virtual time (docs/actions.md#batches). */

const URL = "http://hook.test/";
const message = (n: number) => JSON.stringify({ type: "track", userId: `u${n}`, event: "E", properties: { n } });
const numbers = (body: string) => (JSON.parse(body) as { properties: { n: number } }[]).map((event) => event.properties.n);

function world(respond: FakeResponder, target: Target = { url: URL, headers: {}, batchSize: 3 }, waitMs = 1_000) {
  const clock = new VirtualClock(0);
  const transport = new FakeTransport({ clock, respond });
  const settings = { targets: [target], secret: undefined, userAgent: "Segment (Actions)", destination: "actions" as const, batchWaitMs: waitMs };
  const engine = new DeliveryEngine(settings, { clock, transport, random: () => 1, retryWindowMs: 60_000 });
  const queue = new MemoryQueue();
  const worker = new DeliveryWorker({ queue, engine, concurrency: 4, clock, batching: forwardingBatches(settings) });
  const add = (...ns: number[]) => {
    queue.enqueue(ns.map((n) => ({ body: message(n), source: "web" })));
    worker.notify();
  };
  return { clock, transport, queue, worker, add };
}

describe("serve's worker with Webhooks (Actions) batches (virtual time)", () => {
  it("sends a full batch at once and a partial one after --batch-wait", async () => {
    const { clock, transport, worker, add, queue } = world(() => 200);
    worker.start();
    add(1, 2, 3, 4);
    await clock.advance(0);
    expect(transport.requests.map((r) => numbers(r.body))).toEqual([[1, 2, 3]]);
    await clock.advance(999);
    expect(transport.requests).toHaveLength(1);
    await clock.advance(1);
    expect(transport.requests.map((r) => [numbers(r.body), r.at])).toEqual([
      [[1, 2, 3], 0],
      [[4], 1000],
    ]);
    await clock.advance(0);
    expect([worker.delivered, queue.pendingCount()]).toEqual([4, 0]);
    await worker.stop();
  });

  it("marks events delivered only once their batch got a 2xx: a batch waiting to retry at the stop stays pending, whole", async () => {
    const { clock, transport, worker, add, queue } = world((request) => (numbers(request.body.toString())[0] === 4 ? 503 : 200));
    worker.start();
    add(1, 2, 3, 4, 5, 6, 7);
    await clock.advance(0);
    expect(transport.requests.map((r) => numbers(r.body))).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect([worker.delivered, worker.retrying, queue.pendingCount()]).toEqual([3, 1, 4]);
    await worker.stop();
    // 4–6 waited to retry, 7 waited in its open batch: all four are kept for the next run.
    expect([queue.pendingCount(), worker.delivered, worker.failed]).toEqual([4, 3, 0]);
  });

  it("a batch refused for good fails each of its events, naming the URL", async () => {
    const { clock, worker, add, queue } = world(() => 400);
    worker.start();
    add(1, 2, 3);
    await clock.advance(0);
    expect([worker.failed, queue.failedCount(), queue.pendingCount()]).toEqual([3, 3, 0]);
    expect(queue.listFailed().map((f) => f.failure)).toEqual([1, 2, 3].map(() => ({ reason: `${URL}: HTTP 400`, attempts: 1, status: 400 })));
    await worker.stop();
  });

  it("without a batch size, classic forwarding is unchanged: no batching", () => {
    expect(forwardingBatches({ targets: [{ url: URL, headers: {} }], destination: "actions" })).toBeUndefined();
    expect(forwardingBatches({ targets: [{ url: URL, headers: {}, batchSize: 5 }] })).toBeUndefined();
    expect(forwardingBatches({ targets: [{ url: URL, headers: {}, batchSize: 5 }], destination: "actions" })).toMatchObject({ waitMs: 1000 });
  });
});
