import { describe, expect, it } from "vitest";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import type { DeliveryResult } from "../../src/delivery/types.js";
import { Dispatcher, dispatch, type DispatchEntry, type DispatchOptions } from "../../src/dispatch/dispatcher.js";
import { FakeTransport, VirtualClock, seededRandom, type FakeAnswer, type FakeResponder, type Random } from "../../src/testing.js";

interface Entry extends DispatchEntry {
  body: string;
}

const URL = "http://hook.test/";

function entries(
  count: number,
  key: (i: number) => string | undefined = () => undefined,
  time?: (i: number) => number,
  lineOf = (i: number) => i + 1,
): Entry[] {
  return Array.from({ length: count }, (_, i) => ({ line: lineOf(i), orderKey: key(i), body: JSON.stringify({ line: lineOf(i) }), time: time?.(i) }));
}

async function* batches(list: Entry[], size = 7): AsyncGenerator<Entry[]> {
  for (let i = 0; i < list.length; i += size) yield list.slice(i, i + size);
}

const lineOf = (body: string): number => (JSON.parse(body) as { line: number }).line;

function world(respond: FakeResponder, options: { retryWindowMs?: number; random?: Random } = {}) {
  const clock = new VirtualClock(1_000_000, { autoAdvance: true });
  const transport = new FakeTransport({ clock, respond });
  const engine = new DeliveryEngine(
    { targets: [{ url: URL, headers: {} }], secret: undefined, userAgent: "t" },
    { clock, transport, random: options.random ?? (() => 1), retryWindowMs: options.retryWindowMs ?? 10_000, timeoutMs: 1000 },
  );
  const run = (list: Entry[], extra: Partial<DispatchOptions<Entry>> = {}) =>
    dispatch<Entry>({ source: batches(list), engine, concurrency: 4, clock, ...extra });
  return { clock, transport, engine, run };
}

describe("Dispatcher (virtual time, fake transport)", () => {
  it("never has more than `concurrency` deliveries in flight, and delivers every message once", async () => {
    const random = seededRandom(1);
    let peak = 0;
    const { run, transport } = world(() => {
      peak = Math.max(peak, transport.pending);
      return { status: 200, latencyMs: 1 + Math.floor(random() * 50) };
    });
    const summary = await run(entries(200), { concurrency: 8 });
    expect(peak).toBe(8);
    expect(summary).toMatchObject({ sent: 200, delivered: 200, failed: 0, interrupted: 0, unstarted: 0, stopped: false, resumeLine: undefined });
    expect(transport.requests.map((r) => lineOf(r.body)).sort((a, b) => a - b)).toEqual(entries(200).map((e) => e.line));
  });

  it("keeps each key's messages in order, one at a time, while other keys go on past a retrying one", async () => {
    const random = seededRandom(7);
    const order = new Map<string, number[]>();
    const { run } = world(async (request, attempt) => {
      const line = lineOf(request.body.toString());
      const key = `u${line % 5}`;
      order.set(key, [...(order.get(key) ?? []), line]);
      // Line 3 fails twice: its user waits, the others do not.
      const answer: FakeAnswer = line === 3 && attempt < 3 ? { status: 503, latencyMs: 5 } : { status: 200, latencyMs: 1 + Math.floor(random() * 30) };
      return answer;
    });
    const done: number[] = [];
    const summary = await run(
      entries(100, (i) => `u${(i + 1) % 5}`),
      { concurrency: 16, hooks: { onResult: (e) => done.push(e.line) } },
    );
    expect(summary.delivered).toBe(100);
    for (const lines of order.values()) expect(lines).toEqual([...lines].sort((a, b) => a - b));
    // Users other than line 3's finished messages after line 3's first failure, before it was delivered.
    expect(done.indexOf(3)).toBeGreaterThan(done.indexOf(4));
  });

  it("one key never has two deliveries at once", async () => {
    const inFlight = new Map<string, number>();
    let overlap = false;
    const random = seededRandom(11);
    const list = entries(120, (i) => `k${i % 7}`);
    const keyOf = new Map(list.map((e) => [e.line, e.orderKey as string]));
    const { run } = world(() => ({ status: 200, latencyMs: 1 + Math.floor(random() * 40) }));
    await run(list, {
      concurrency: 32,
      hooks: {
        onStart: (e) => {
          const key = keyOf.get(e.line) as string;
          if ((inFlight.get(key) ?? 0) > 0) overlap = true;
          inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
        },
        onResult: (e) => {
          const key = keyOf.get(e.line) as string;
          inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
        },
      },
    });
    expect(overlap).toBe(false);
  });

  it("rate: starts no faster than asked", async () => {
    const { run, transport } = world(() => 200);
    await run(entries(21), { concurrency: 16, rate: 10 });
    const starts = transport.requests.map((r) => r.at);
    const span = (starts.at(-1) as number) - (starts[0] as number);
    // 20 gaps of 100 ms; the bucket allows a burst of 2 at most.
    expect(span).toBeGreaterThanOrEqual(1900);
    expect(span).toBeLessThanOrEqual(2000);
  });

  it("speed: keeps the recorded spacing, sped up", async () => {
    const { run, transport } = world(() => 200);
    await run(
      entries(
        6,
        () => undefined,
        (i) => 5_000_000 + i * 1000,
      ),
      { concurrency: 16, speed: 10 },
    );
    const starts = transport.requests.map((r) => r.at - (transport.requests[0]?.at ?? 0));
    expect(starts).toEqual([0, 100, 200, 300, 400, 500]);
  });

  it("abort: a summary of delivered, failed, interrupted and unstarted, and the low-water resume line", async () => {
    // Line 3 is retried until the abort; its user's later message (line 8) waits behind it.
    const { run, clock } = world((request) => (lineOf(request.body.toString()) === 3 ? 503 : { status: 200, latencyMs: 10 }), { retryWindowMs: 3_600_000 });
    const controller = new AbortController();
    const list = entries(40, (i) => (i + 1 === 3 || i + 1 === 8 ? "stuck" : `u${i}`));
    clock.setTimeout(() => controller.abort("SIGINT"), 120);
    const summary = await run(list, { concurrency: 2, signal: controller.signal });
    expect(summary.stopped).toBe(true);
    expect(summary.interrupted).toBe(1);
    expect(summary.unstarted).toBeGreaterThanOrEqual(1);
    expect(summary.resumeLine).toBe(3);
    expect(summary.failed).toBe(0);
    // Lines 1 and 2 are below the mark; everything else delivered is counted as to be sent again.
    expect(summary.deliveredAfterResume).toBe(summary.delivered - 2);
    expect(summary.delivered).toBeGreaterThan(2);
  });

  it("abort with a record of failures (dead letters): interrupted and unstarted messages are not done, failed ones are", async () => {
    // Line 3 is retried until the abort; line 5 fails for good (400) and is recorded.
    const { run, clock } = world((request) => ({ 3: 503, 5: 400 })[lineOf(request.body.toString())] ?? { status: 200, latencyMs: 10 }, {
      retryWindowMs: 3_600_000,
    });
    const controller = new AbortController();
    const failed: number[] = [];
    const interrupted: number[] = [];
    clock.setTimeout(() => controller.abort("SIGINT"), 120);
    const summary = await run(
      entries(400, (i) => (i + 1 === 3 || i + 1 === 8 ? "stuck" : `u${i}`)),
      {
        concurrency: 2,
        signal: controller.signal,
        recordsFailed: true,
        hooks: {
          onResult: (e, r) => {
            if (r.interrupted) interrupted.push(e.line);
            else if (!r.delivered) failed.push(e.line);
          },
          onUnstarted: (e) => interrupted.push(e.line),
        },
      },
    );
    expect(failed).toEqual([5]);
    expect(interrupted).toContain(3);
    expect(interrupted).toContain(8);
    // Line 3 was interrupted, not recorded: the mark stays there, and the later deliveries (not line 5) are counted.
    expect(summary.resumeLine).toBe(3);
    expect(summary.deliveredAfterResume).toBe(summary.delivered - 2);
  });

  it("an abort before the start sends nothing and resumes at the first line", async () => {
    const { run, transport } = world(() => 200);
    const controller = new AbortController();
    controller.abort("SIGTERM");
    const summary = await run(
      entries(10, undefined, undefined, (i) => i + 5),
      { signal: controller.signal, startLine: 5 },
    );
    expect(transport.requests).toHaveLength(0);
    expect(summary).toMatchObject({ sent: 0, stopped: true, resumeLine: 5, deliveredAfterResume: 0 });
  });

  it("live progress: sent, delivered, failed, retrying and the oldest pending message's next attempt", async () => {
    const clock = new VirtualClock(0);
    const transport = new FakeTransport({ clock, respond: (request) => (lineOf(request.body.toString()) === 1 ? 503 : 400) });
    const engine = new DeliveryEngine({ targets: [{ url: URL, headers: {} }], secret: undefined, userAgent: "t" }, { clock, transport, random: () => 1 });
    const controller = new AbortController();
    const dispatcher = new Dispatcher<Entry>({ source: entries(3), engine, concurrency: 4, clock, signal: controller.signal });
    const running = dispatcher.run();
    await clock.advance(0);
    expect(dispatcher.progress).toEqual({ sent: 3, delivered: 0, skipped: 0, failed: 2, retrying: 1, oldestNextAttemptAt: 1000 });
    controller.abort("SIGINT");
    const summary = await running;
    expect(summary).toMatchObject({ failed: 2, interrupted: 1, resumeLine: 1, deliveredAfterResume: 0 });
  });

  it("a plain list is a source too, delivered in order at concurrency 1", async () => {
    const { engine, transport, clock } = world(() => 200);
    const results: DeliveryResult[] = [];
    await dispatch<Entry>({ source: entries(5), engine, concurrency: 1, clock, hooks: { onResult: (_e, r) => results.push(r) } });
    expect(transport.requests.map((r) => lineOf(r.body))).toEqual([1, 2, 3, 4, 5]);
    expect(results.every((r) => r.delivered)).toBe(true);
  });
});

describe("the resume line never skips (property, seeded random outcomes and abort times)", () => {
  for (const recordsFailed of [false, true]) {
    it(`${recordsFailed ? "with" : "without"} a dead-letter record: delivered ∪ recorded ∪ {lines ≥ N} covers every line`, async () => {
      let stopped = 0;
      let repeats = 0;
      for (let seed = 1; seed <= 60; seed++) {
        const random = seededRandom(seed);
        const count = 5 + Math.floor(random() * 80);
        const users = 1 + Math.floor(random() * 6);
        // Gaps in the numbering stand for skipped (invalid or filtered) lines.
        const list = entries(
          count,
          (i) => (random() < 0.2 ? undefined : `u${i % users}`),
          undefined,
          (i) => 3 * i + 1 + (i % 3),
        );
        const outcome = new Map(list.map((e) => [e.line, [200, 200, 200, 500, 503, 400, "hang"][Math.floor(random() * 7)] as FakeAnswer]));
        const { run, clock } = world((request, attempt) => {
          const answer = outcome.get(lineOf(request.body.toString())) as FakeAnswer;
          // Retryable ones succeed on their third attempt, if they get that far.
          if (attempt >= 3 && (answer === 500 || answer === 503 || answer === "hang")) return 200;
          return typeof answer === "number" ? { status: answer, latencyMs: 1 + Math.floor(random() * 20) } : answer;
        });
        const controller = new AbortController();
        clock.setTimeout(() => controller.abort("SIGINT"), Math.floor(random() * 3000));
        const delivered = new Set<number>();
        const recorded = new Set<number>();
        const summary = await run(list, {
          concurrency: 1 + Math.floor(random() * 6),
          signal: controller.signal,
          recordsFailed,
          hooks: {
            // Only final failures are recorded; interrupted and unstarted messages are in no set.
            onResult: (e, r) => {
              if (r.delivered) delivered.add(e.line);
              else if (!r.interrupted) recorded.add(e.line);
            },
          },
        });
        const context = `seed ${seed}`;
        expect(summary.sent, context).toBe(summary.delivered + summary.failed + summary.interrupted);
        expect(summary.delivered, context).toBe(delivered.size);
        if (!summary.stopped) {
          expect(delivered.size + summary.failed, context).toBe(count);
          continue;
        }
        stopped += 1;
        if (summary.deliveredAfterResume > 0) repeats += 1;
        const mark = summary.resumeLine as number;
        for (const entry of list) {
          const covered = delivered.has(entry.line) || (recordsFailed && recorded.has(entry.line)) || entry.line >= mark;
          expect(covered, `${context}: line ${entry.line} is lost (resume at ${mark})`).toBe(true);
        }
        expect(summary.deliveredAfterResume, context).toBe([...delivered].filter((line) => line >= mark).length);
        // A low-water mark: the line itself was not done (or is the first one not read).
        expect(delivered.has(mark) || (recordsFailed && recorded.has(mark)), context).toBe(false);
      }
      // The runs exercised what they claim: most were interrupted, and without a record some resume below delivered lines.
      expect(stopped).toBeGreaterThan(30);
      expect(repeats).toBeGreaterThan(5);
    }, 60_000);
  }
});
