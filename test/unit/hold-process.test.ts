import { describe, expect, it } from "vitest";
import { holdProcess } from "../../src/util/hold-process.js";

const timers = (): number => process.getActiveResourcesInfo().filter((name) => name === "Timeout").length;

describe("holdProcess", () => {
  it("keeps one ref'd timer while anyone holds, and none after the last release (each release counts once)", () => {
    const before = timers();
    const first = holdProcess();
    const second = holdProcess();
    expect(timers()).toBe(before + 1);
    first();
    first();
    expect(timers()).toBe(before + 1);
    second();
    expect(timers()).toBe(before);
  });
});
