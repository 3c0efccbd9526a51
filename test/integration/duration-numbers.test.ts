import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startReceiver } from "../../src/testing.js";
import type { TestReceiver } from "../../src/testing/types.js";
import { runInProcess } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// Durations given as numbers (milliseconds) are held to the rules of durations given as strings:
// finite, from 0, within a Node timer's range (2^31 − 1 ms). Past that range a timer fires at once
// with a TimeoutOverflowWarning: a delay of 2^31 ms answered at once, a waitFor of Infinity ms
// "timed out after Infinity ms" a millisecond later.

const { dir } = tempDir("webhook-cli-duration-numbers-");
const PAST_A_TIMER = 2 ** 31;

/** The process warnings emitted while `act` runs and a tick after (a TimeoutOverflowWarning is one); `act`'s failures fail the test. */
async function warningsDuring(act: () => Promise<unknown>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning.name);
  process.on("warning", onWarning);
  try {
    await act();
    await new Promise((done) => setImmediate(done));
  } finally {
    process.off("warning", onWarning);
  }
  return warnings;
}

describe("listen --responses: a rule's delay in milliseconds", () => {
  it.each([
    [String(PAST_A_TIMER), /key "\[0\]\.respond\.delay": duration 2147483648 ms is too long: at most 2147483647ms/],
    ["-1", /key "\[0\]\.respond\.delay": invalid duration -1: give milliseconds from 0 to 2147483647, or a duration such as "2s"/],
    // JSON.parse reads 1e400 as Infinity.
    ["1e400", /key "\[0\]\.respond\.delay": invalid duration Infinity: give milliseconds/],
    ["null", /key "\[0\]\.respond\.delay": invalid duration null: give milliseconds/],
  ])("delay %s: exit 2, naming the rule's key", async (delay, error) => {
    writeFileSync(join(dir, "rules.json"), `[{"respond": {"status": 202, "delay": ${delay}}}]`);
    // --exit-after: a listen that took the rule ends by itself (as the old code's did, exit 0).
    const result = await runInProcess(["listen", "--port", "0", "--exit-after", "2s", "--responses", "rules.json"], { cwd: dir });
    expect(result.stderr).toMatch(new RegExp(`^error: rules\\.json: ${error.source}`));
    expect(result).toMatchObject({ code: 2, stdout: "" });
  });
});

describe("webhook-cli/testing: faults.delay, a rule's delay and waitFor's timeout in milliseconds", () => {
  it.each([
    ["faults.delay Infinity", { faults: { delay: Number.POSITIVE_INFINITY } }, /^delay: invalid duration Infinity: give milliseconds from 0 to 2147483647/],
    ["faults.delay 2^31", { faults: { delay: PAST_A_TIMER } }, /^delay: duration 2147483648 ms is too long/],
    ["faults.delay -5", { faults: { delay: -5 } }, /^delay: invalid duration -5/],
    ["a rule's delay NaN", { responses: [{ respond: { delay: Number.NaN } }] }, /^responses: key "\[0\]\.respond\.delay": invalid duration NaN/],
    [
      "a rule's delay 2^31",
      { responses: [{ respond: { delay: PAST_A_TIMER } }] },
      /^responses: key "\[0\]\.respond\.delay": duration 2147483648 ms is too long/,
    ],
  ])("startReceiver with %s is refused, naming the field", async (_what, options, error) => {
    const warnings = await warningsDuring(async () => {
      await expect(startReceiver(options)).rejects.toMatchObject({ code: "E_CONFIG", message: expect.stringMatching(error) });
    });
    expect(warnings).toEqual([]);
  });

  describe("on a started receiver", () => {
    let receiver: TestReceiver;
    beforeEach(async () => {
      receiver = await startReceiver();
    });
    afterEach(() => receiver.close());

    it.each([
      [Number.POSITIVE_INFINITY, /^timeout: invalid duration Infinity/],
      [Number.NaN, /^timeout: invalid duration NaN/],
      [-1, /^timeout: invalid duration -1/],
      [PAST_A_TIMER, /^timeout: duration 2147483648 ms is too long/],
    ])("waitFor with timeout %s rejects at once, naming the field, with no TimeoutOverflowWarning", async (timeout, error) => {
      const warnings = await warningsDuring(async () => {
        await expect(receiver.waitFor({ type: "track" }, { timeout })).rejects.toMatchObject({ code: "E_CONFIG", message: expect.stringMatching(error) });
      });
      expect(warnings).toEqual([]);
    });

    it("respondWith checks a rule's delay as startReceiver does", () => {
      expect(() => receiver.respondWith([{ respond: { delay: PAST_A_TIMER } }])).toThrow(
        /^rules: key "\[0\]\.respond\.delay": duration 2147483648 ms is too long/,
      );
    });

    it('milliseconds within range still work: a fraction (rounded, as "0.4ms" is) and the longest timer', async () => {
      receiver.respondWith([{ respond: { delay: 0.4 } }, { respond: { delay: 2 ** 31 - 1 } }]);
      const waiting = receiver.waitFor({ type: "track" }, { timeout: 2 ** 31 - 1 });
      const sent = await runInProcess(["send", "--type", "track", "--url", `${receiver.url}/hooks`, "--retry-window", "0"]);
      expect(sent.code).toBe(0);
      await expect(waiting).resolves.toHaveLength(1);
    });
  });
});
