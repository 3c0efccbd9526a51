import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { seededRandom, sleep, VirtualClock } from "../../src/util/clock.js";
import { formatDuration, parseDuration } from "../../src/util/duration.js";
import { cpuMsAsync } from "../helpers/cpu-time.js";

describe("parseDuration", () => {
  it.each([
    ["250ms", 250],
    ["5s", 5000],
    ["1.5s", 1500],
    ["10m", 600_000],
    ["4h", 14_400_000],
  ])("%s → %i ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["5", "s", "5 sec", "-1s", "", "1d"])("rejects %j naming value and flag", (text) => {
    expect(() => parseDuration(text, { flag: "--timeout" })).toThrow(UsageError);
    try {
      parseDuration(text, { flag: "--timeout" });
    } catch (error) {
      expect((error as UsageError).describe()).toBe(`--timeout: invalid duration "${text}": use a number with a unit, e.g. 250ms, 5s, 10m, 4h`);
    }
  });

  it("formats for humans", () => {
    expect([formatDuration(85), formatDuration(1234), formatDuration(90_000), formatDuration(5_400_000)]).toEqual(["85ms", "1.2s", "1.5m", "1.5h"]);
  });
});

describe("VirtualClock", () => {
  it("fires timers in order only when advanced", async () => {
    const clock = new VirtualClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push("b"), 200);
    clock.setTimeout(() => fired.push("a"), 100);
    const cancelled = clock.setTimeout(() => fired.push("never"), 150);
    clock.clearTimeout(cancelled);
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(101);
    expect(fired).toEqual(["a", "b"]);
    expect(clock.now()).toBe(1200);
  });

  it("runs sleeps chained after each other", async () => {
    const clock = new VirtualClock(0);
    const times: number[] = [];
    const task = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 1000);
        times.push(clock.now());
      }
    })();
    await clock.runAll();
    await task;
    expect(times).toEqual([1000, 2000, 3000]);
  });

  it("auto-advances when nothing else is pending", async () => {
    const clock = new VirtualClock(0, { autoAdvance: true });
    // An hour of virtual time in little CPU time (a clock that waited for real would hit the test's timeout).
    expect(await cpuMsAsync(() => sleep(clock, 3_600_000))).toBeLessThan(1000);
    expect(clock.now()).toBe(3_600_000);
  });

  it("rejects a sleep when aborted", async () => {
    const clock = new VirtualClock(0);
    const controller = new AbortController();
    const pending = sleep(clock, 1000, controller.signal);
    controller.abort("SIGINT");
    await expect(pending).rejects.toBe("SIGINT");
    expect(clock.pending).toBe(0);
  });
});

describe("seededRandom", () => {
  it("repeats for a seed and stays in [0, 1)", () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const values = Array.from({ length: 1000 }, () => a());
    expect(values).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    expect(seededRandom(8)()).not.toBe(seededRandom(7)());
  });
});
