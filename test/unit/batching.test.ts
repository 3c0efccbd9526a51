import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Target } from "../../src/config/destination.js";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import type { DeliveryResult } from "../../src/delivery/types.js";
import { Batcher } from "../../src/dispatch/batcher.js";
import { Dispatcher, type DispatchEntry, type DispatchOptions } from "../../src/dispatch/dispatcher.js";
import { MultiKeyGate } from "../../src/dispatch/multi-key-gate.js";
import { parseMapping } from "../../src/messages/mapping.js";
import { answers, byUrl, FakeTransport, VirtualClock, type FakeResponder } from "../../src/testing.js";

describe("Batcher (pure)", () => {
  it("hands out a group's batch when full; a size of 1 hands each item out at once; flush hands out the rest", () => {
    const batcher = new Batcher<number>([3, 1]);
    expect(batcher.add(1, 0)).toEqual([{ group: 1, items: [1] }]);
    expect(batcher.add(2, 0)).toEqual([{ group: 1, items: [2] }]);
    expect(batcher.add(3, 0)).toEqual([
      { group: 0, items: [1, 2, 3] },
      { group: 1, items: [3] },
    ]);
    batcher.add(4, 0);
    expect(batcher.held).toBe(1);
    expect(batcher.nextDueAt()).toBeUndefined();
    expect(batcher.flush()).toEqual([{ group: 0, items: [4] }]);
    expect(batcher.flush()).toEqual([]);
  });

  it("with a wait, a batch falls due that long after its first item", () => {
    const batcher = new Batcher<string>([10, 10], 1000);
    batcher.add("a", 5_000);
    batcher.add("b", 5_600);
    expect(batcher.nextDueAt()).toBe(6_000);
    expect(batcher.due(5_999)).toEqual([]);
    expect(batcher.due(6_000)).toEqual([
      { group: 0, items: ["a", "b"] },
      { group: 1, items: ["a", "b"] },
    ]);
    expect(batcher.nextDueAt()).toBeUndefined();
  });
});

describe("MultiKeyGate (pure)", () => {
  it("lets an item run once every earlier item sharing one of its keys finished; others pass", () => {
    const gate = new MultiKeyGate<string>();
    expect(gate.enter(["a", "b"], 0, "ab")).toBe(true);
    expect(gate.enter(["b", "c"], 1, "bc")).toBe(false);
    expect(gate.enter(["c"], 2, "c")).toBe(false);
    expect(gate.enter(["d"], 3, "d")).toBe(true);
    expect(gate.enter([], 4, "none")).toBe(true);
    expect(gate.blocked).toBe(2);
    expect(gate.leave(["a", "b"], "ab")).toEqual([{ seq: 1, item: "bc" }]);
    expect(gate.leave(["b", "c"], "bc")).toEqual([{ seq: 2, item: "c" }]);
    expect(gate.blocked).toBe(0);
    gate.enter(["x"], 5, "x1");
    gate.enter(["x"], 6, "x2");
    expect(gate.drain()).toEqual(["x2"]);
  });
});

const A = "http://a.test/hook";
const B = "http://b.test/hook";
const SECRET = "k";

interface Entry extends DispatchEntry {
  body: string;
}

function event(line: number, user: string, extra: Record<string, unknown> = {}): Entry {
  const body = JSON.stringify({ type: "track", event: "E", userId: user, properties: { line }, timestamp: "2024-01-01T00:00:00.000Z", ...extra });
  return { line, orderKey: user, body, time: undefined, canonical: true };
}

const linesOf = (body: string): number[] => (JSON.parse(body) as ({ properties: { line: number } } | null)[]).map((e) => e?.properties.line ?? 0);

function world(respond: FakeResponder, targets: Target[]) {
  const clock = new VirtualClock(1_000_000, { autoAdvance: true });
  const transport = new FakeTransport({ clock, respond });
  const engine = new DeliveryEngine(
    { targets, secret: SECRET, userAgent: "Segment (Actions)", destination: "actions" },
    { clock, transport, random: () => 1, retryWindowMs: 60_000 },
  );
  const results = new Map<number, DeliveryResult>();
  const unstarted: number[] = [];
  const run = (source: AsyncIterable<Entry[]> | Entry[], extra: Partial<DispatchOptions<Entry>> = {}) =>
    new Dispatcher<Entry>({
      source,
      engine,
      concurrency: 8,
      clock,
      batching: { targets },
      hooks: { onResult: (entry, result) => results.set(entry.line, result), onUnstarted: (entry) => unstarted.push(entry.line) },
      ...extra,
    }).runToEnd();
  return { clock, transport, engine, run, results, unstarted };
}

describe("the dispatcher with Webhooks (Actions) batches (virtual time)", () => {
  it("sends each target arrays of up to its batch size, in input order, signed over the first element; every event gets the batch's answer", async () => {
    const target: Target = { url: A, headers: {}, method: "PUT", batchSize: 4 };
    const { run, transport, results } = world(answers(200), [target]);
    const list = Array.from({ length: 10 }, (_, i) => event(i + 1, `u${i}`));
    const summary = await run(list);
    expect(summary).toMatchObject({ sent: 10, delivered: 10, failed: 0, stopped: false });
    expect(transport.requests.map((r) => linesOf(r.body))).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10],
    ]);
    for (const request of transport.requests) {
      const first = JSON.stringify((JSON.parse(request.body) as unknown[])[0]);
      expect(request.headers["X-Signature"]).toBe(createHmac("sha1", SECRET).update(first).digest("hex"));
    }
    expect([...results.values()].every((r) => r.delivered && r.urls[0]?.status === 200)).toBe(true);
  });

  it("retries a batch whole, and a batch that finally fails fails each of its events", async () => {
    const target: Target = { url: A, headers: {}, batchSize: 3 };
    const { run, transport, results } = world((request, attempt) => (linesOf(request.body.toString())[0] === 1 ? (attempt < 3 ? 503 : 200) : 400), [target]);
    const summary = await run([1, 2, 3, 4, 5].map((line) => event(line, `u${line}`)));
    expect(summary).toMatchObject({ delivered: 3, failed: 2, retried: 3 });
    expect(transport.requests.filter((r) => linesOf(r.body)[0] === 1)).toHaveLength(3);
    expect(new Set(transport.requests.filter((r) => linesOf(r.body)[0] === 1).map((r) => r.body)).size).toBe(1);
    expect(results.get(2)).toMatchObject({ delivered: true, rounds: 3, urls: [{ status: 200, attempts: 3 }] });
    expect(results.get(5)).toMatchObject({ delivered: false, urls: [{ status: 400, attempts: 1, error: "HTTP 400" }] });
  });

  it("keeps one user's order across batches: a batch holding a user waits for the earlier batch holding them to have its final answer", async () => {
    const target: Target = { url: A, headers: {}, batchSize: 2 };
    const starts: { lines: number[]; at: number; attempt: number }[] = [];
    const { run, clock } = world(
      (request, attempt) => {
        const lines = linesOf(request.body.toString());
        starts.push({ lines, at: clock.now(), attempt });
        // The first batch (u1, u2) fails twice, slowly; the others answer at once.
        return lines[0] === 1 && attempt < 3 ? { status: 503, latencyMs: 500 } : 200;
      },
      [target],
    );
    // Batches: [1 u1, 2 u2], [3 u3, 4 u4], [5 u1, 6 u5], [7 u6, 8 u2].
    const users = ["u1", "u2", "u3", "u4", "u1", "u5", "u6", "u2"];
    await run(users.map((user, i) => event(i + 1, user)));
    const firstDone = starts.filter((s) => s.lines[0] === 1).at(-1)?.at ?? 0;
    const at = (line: number) => starts.find((s) => s.lines[0] === line)?.at ?? -1;
    expect(at(3)).toBe(1_000_000); // no shared user: goes at once
    expect(at(5)).toBeGreaterThanOrEqual(firstDone); // holds u1
    expect(at(7)).toBeGreaterThanOrEqual(firstDone); // holds u2
  });

  it("several targets each get every event, with their own batch size, method and mapping; an event is delivered only when every target took it", async () => {
    const a: Target = { url: A, headers: {}, batchSize: 3 };
    const b: Target = { url: B, headers: {}, method: "PATCH", mapping: parseMapping("$.properties", { flag: "--data" }) };
    const { run, transport, results } = world(byUrl({ [B]: (request) => (request.body.toString().includes('"line":2') ? 404 : 200) }), [a, b]);
    const summary = await run([1, 2, 3, 4].map((line) => event(line, `u${line}`)));
    expect(summary).toMatchObject({ sent: 4, delivered: 3, failed: 1 });
    expect(transport.requests.filter((r) => r.url === A).map((r) => linesOf(r.body))).toEqual([[1, 2, 3], [4]]);
    expect(transport.requests.filter((r) => r.url === B).map((r) => r.body)).toEqual(['{"line":1}', '{"line":2}', '{"line":3}', '{"line":4}']);
    expect(results.get(2)?.urls.map((u) => [u.url, u.status])).toEqual([
      [A, 200],
      [B, 404],
    ]);
  });

  it("an event whose data is refused is left out of its batch and fails; the others are sent", async () => {
    const target: Target = { url: A, headers: {}, batchSize: 10, mapping: parseMapping('{"@path": "$.properties.coupon"}', { flag: "--data" }) };
    const { run, transport, results } = world(answers(200), [target]);
    const list = [
      event(1, "u1", { properties: { coupon: { code: "A" } } }),
      event(2, "u2", { properties: { coupon: "B" } }),
      event(3, "u3", { properties: {} }),
    ];
    const summary = await run(list);
    expect(summary).toMatchObject({ delivered: 2, failed: 1 });
    expect(transport.requests.map((r) => r.body)).toEqual(['[{"code":"A"},null]']);
    expect(results.get(2)).toMatchObject({
      delivered: false,
      urls: [{ attempts: 0, status: null, error: expect.stringMatching(/^not sent: Data must be an object/) }],
    });
  });

  it("with a wait, a partial batch goes once its first event has waited, while the source has nothing more (serve)", async () => {
    const target: Target = { url: A, headers: {}, batchSize: 100 };
    const { run, transport, clock } = world(answers(200), [target]);
    async function* slowly(): AsyncGenerator<Entry[]> {
      yield [event(1, "u1"), event(2, "u2")];
      await new Promise<void>((resolve) => clock.setTimeout(resolve, 5_000));
      yield [event(3, "u3")];
      await new Promise<void>((resolve) => clock.setTimeout(resolve, 5_000));
      yield [event(4, "u4")];
    }
    const summary = await run(slowly(), { batching: { targets: [target], waitMs: 1_000 } });
    expect(summary.delivered).toBe(4);
    // The source's end sends the last batch at once.
    expect(transport.requests.map((r) => [linesOf(r.body), r.at - 1_000_000])).toEqual([
      [[1, 2], 1_000],
      [[3], 6_000],
      [[4], 10_000],
    ]);
  });

  it("stopped part way: every event not delivered by every target is at or after the low-water resume line", async () => {
    const a: Target = { url: A, headers: {}, batchSize: 1 };
    const b: Target = { url: B, headers: {}, batchSize: 5 };
    const controller = new AbortController();
    const { run } = world(
      (request) => {
        if (request.url === A && request.body.toString().includes('"line":7')) controller.abort("SIGINT");
        return 200;
      },
      [a, b],
    );
    const list = Array.from({ length: 12 }, (_, i) => event(i + 1, `u${i % 3}`));
    const summary = await run(list, { signal: controller.signal, concurrency: 1 });
    expect(summary.stopped).toBe(true);
    // B's first batch (1–5) was answered; 6 and 7 went to A only: the resume line is 6.
    expect(summary.resumeLine).toBe(6);
    expect(summary.delivered).toBe(5);
  });
});
