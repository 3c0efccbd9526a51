import { describe, expect, it } from "vitest";
import { onAbort } from "../../src/util/abort-listeners.js";

describe("onAbort", () => {
  it("calls every listener still listening once, in the order added, when the signal aborts", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    onAbort(controller.signal, () => calls.push("a"));
    const stopB = onAbort(controller.signal, () => calls.push("b"));
    onAbort(controller.signal, () => calls.push("c"));
    stopB();
    controller.abort();
    controller.abort();
    expect(calls).toEqual(["a", "c"]);
  });

  it("adds one listener to the signal however many listen, and calls none added after the abort", () => {
    const controller = new AbortController();
    let added = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added += 1;
      add(...args);
    }) as typeof add;
    let calls = 0;
    const stops = Array.from({ length: 100 }, () => onAbort(controller.signal, () => (calls += 1)));
    expect(added).toBe(1);
    for (const stop of stops.slice(0, 40)) stop();
    controller.abort();
    expect(calls).toBe(60);
    onAbort(controller.signal, () => (calls += 1));
    expect(calls).toBe(60);
  });

  it("keeps a listener of one signal from another's abort", () => {
    const first = new AbortController();
    const second = new AbortController();
    const calls: string[] = [];
    onAbort(first.signal, () => calls.push("first"));
    onAbort(second.signal, () => calls.push("second"));
    second.abort();
    expect(calls).toEqual(["second"]);
  });
});
