import { describe, expect, it } from "vitest";
import { Scheduler, type Schedulable, type SchedulerHandlers, type SchedulerOptions } from "../../src/dispatch/scheduler.js";
import { seededRandom, sleep, VirtualClock } from "../../src/util/clock.js";

interface Item extends Schedulable {
  n: number;
}

async function* batches(items: Item[], size = 7): AsyncGenerator<Item[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

const items = (count: number, key: (n: number) => string | undefined = () => undefined, time?: (n: number) => number): Item[] =>
  Array.from({ length: count }, (_, n) => ({ n, orderKey: key(n), time: time?.(n) }));

const pace = <T extends Schedulable>(source: AsyncIterator<T[]>, options: SchedulerOptions, handlers: SchedulerHandlers<T>) =>
  new Scheduler<T>(source, options, handlers).run();

describe("Scheduler", () => {
  it("never exceeds the concurrency and runs every item once", async () => {
    const clock = new VirtualClock(0, { autoAdvance: true });
    const random = seededRandom(1);
    let inFlight = 0;
    let peak = 0;
    const ran: number[] = [];
    await pace(
      batches(items(200)),
      { concurrency: 8, clock },
      {
        async run(item) {
          inFlight += 1;
          peak = Math.max(peak, inFlight);
          await sleep(clock, Math.floor(random() * 50));
          inFlight -= 1;
          ran.push(item.n);
        },
        dropped() {},
      },
    );
    expect(peak).toBe(8);
    expect(ran.sort((a, b) => a - b)).toEqual(items(200).map((i) => i.n));
  });

  it("keeps each key's items in order, one at a time, while other keys proceed", async () => {
    const clock = new VirtualClock(0, { autoAdvance: true });
    const random = seededRandom(7);
    const active = new Set<string>();
    const order = new Map<string, number[]>();
    let overlap = false;
    await pace(
      batches(items(400, (n) => `u${n % 13}`)),
      { concurrency: 32, clock },
      {
        async run(item) {
          const key = item.orderKey as string;
          if (active.has(key)) overlap = true;
          active.add(key);
          await sleep(clock, Math.floor(random() * 100));
          active.delete(key);
          order.set(key, [...(order.get(key) ?? []), item.n]);
        },
        dropped() {},
      },
    );
    expect(overlap).toBe(false);
    expect(order.size).toBe(13);
    for (const list of order.values()) expect(list).toEqual([...list].sort((a, b) => a - b));
  });

  it("lets other users go on while one user's message is slow (retried)", async () => {
    const clock = new VirtualClock(0);
    const finishedAt = new Map<number, number>();
    const run = pace(
      batches(items(6, (n) => (n % 2 === 0 ? "slow" : "fast"))),
      { concurrency: 4, clock },
      {
        async run(item) {
          await sleep(clock, item.n === 0 ? 10_000 : 10);
          finishedAt.set(item.n, clock.now());
        },
        dropped() {},
      },
    );
    await clock.advance(100);
    expect([...finishedAt.keys()].sort()).toEqual([1, 3, 5]);
    await clock.advance(10_100);
    await run;
    expect(finishedAt.get(2)).toBeGreaterThan(10_000);
    expect(finishedAt.get(4)).toBeGreaterThan(finishedAt.get(2) as number);
  });

  it("limits starts to the rate", async () => {
    const clock = new VirtualClock(0);
    const startedAt: number[] = [];
    const run = pace(
      batches(items(101)),
      { concurrency: 64, rate: 50, clock },
      {
        async run() {
          startedAt.push(clock.now());
        },
        dropped() {},
      },
    );
    await clock.advance(1000);
    expect(startedAt.length).toBeGreaterThanOrEqual(50);
    expect(startedAt.length).toBeLessThanOrEqual(52);
    await clock.advance(1100);
    await run;
    expect(startedAt).toHaveLength(101);
    expect(startedAt[100]).toBeGreaterThanOrEqual(1980);
    expect(startedAt[100]).toBeLessThanOrEqual(2020);
  });

  it("keeps the recorded spacing, sped up", async () => {
    const clock = new VirtualClock(1_000_000);
    const startedAt: number[] = [];
    const spacing = [0, 1000, 1000, 5000, 9000];
    const run = pace(
      batches(items(5, undefined, (n) => 1_700_000_000_000 + (spacing[n] as number))),
      { concurrency: 4, speed: 10, clock },
      {
        async run() {
          startedAt.push(clock.now() - 1_000_000);
        },
        dropped() {},
      },
    );
    await clock.runAll();
    await run;
    expect(startedAt).toEqual([0, 100, 100, 500, 900]);
  });

  it("buffers a bounded number of items while one key is blocked", async () => {
    const clock = new VirtualClock(0);
    let pulled = 0;
    async function* counting(): AsyncGenerator<Item[]> {
      for (let n = 0; n < 1000; n++) {
        pulled += 1;
        yield [{ n, orderKey: "same", time: undefined }];
      }
    }
    const run = pace(
      counting(),
      { concurrency: 8, maxBuffered: 20, clock },
      {
        run: () => sleep(clock, 100),
        dropped() {},
      },
    );
    await clock.advance(0);
    expect(pulled).toBeLessThanOrEqual(23);
    await clock.runAll(100_000);
    await run;
    expect(pulled).toBe(1000);
  });

  it("reads ahead past ready items only while keys are blocked: at most `concurrency` wait ready", async () => {
    const clock = new VirtualClock(0);
    let pulled = 0;
    let started = 0;
    async function* counting(): AsyncGenerator<Item[]> {
      for (let n = 0; n < 1000; n++) {
        pulled += 1;
        // Every fourth item is the busy user's; the others all differ.
        yield [{ n, orderKey: n % 4 === 0 ? "busy" : `u${n}`, time: undefined }];
      }
    }
    const run = pace(
      counting(),
      { concurrency: 8, maxBuffered: 200, clock },
      {
        run: async () => {
          started += 1;
          await sleep(clock, 100);
        },
        dropped() {},
      },
    );
    await clock.advance(0);
    // 8 started; the busy user's later items wait behind it and the ready ones stop at 8.
    expect(started).toBe(8);
    const blocked = Math.floor((pulled - 1) / 4);
    expect(pulled - started - blocked).toBeLessThanOrEqual(8 + 1);
    expect(pulled).toBeLessThan(40);
    await clock.runAll(1_000_000);
    await run;
    expect(pulled).toBe(1000);
  });

  it("on abort stops reading, lets in-flight items finish and hands back the waiting ones", async () => {
    const clock = new VirtualClock(0);
    const controller = new AbortController();
    const finished: number[] = [];
    const dropped: number[] = [];
    const run = pace(
      batches(
        items(100, (n) => `u${n % 3}`),
        10,
      ),
      { concurrency: 4, maxBuffered: 10, clock, signal: controller.signal },
      {
        async run(item) {
          await sleep(clock, 50);
          finished.push(item.n);
        },
        dropped: (item) => dropped.push(item.n),
      },
    );
    await clock.advance(120);
    controller.abort("SIGINT");
    await clock.advance(100);
    const result = await run;
    expect(result.stopped).toBe(true);
    const last = result.lastAdmitted?.n ?? -1;
    // Everything admitted was either finished or handed back; nothing past it was taken.
    expect([...finished, ...dropped].sort((a, b) => a - b)).toEqual(Array.from({ length: last + 1 }, (_, i) => i));
    expect(last).toBeLessThan(99);
  });
});

describe("pace at concurrency 1", () => {
  it("keeps file order across users", async () => {
    const clock = new VirtualClock(0, { autoAdvance: true });
    const order: number[] = [];
    await pace(
      batches(items(50, (n) => `u${n % 3 === 0 ? 0 : n % 5}`)),
      { concurrency: 1, clock },
      {
        async run(item) {
          await sleep(clock, 5);
          order.push(item.n);
        },
        dropped() {},
      },
    );
    expect(order).toEqual(items(50).map((i) => i.n));
  });
});
