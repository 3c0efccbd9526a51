import { describe, expect, it } from "vitest";
import { describeError } from "../../src/cli/shell/exit-codes.js";
import { WebhookCliError } from "../../src/errors.js";
import { AnswerPlan, parseScript } from "../../src/receiver/answer-plan.js";
import { seededRandom } from "../../src/util/clock.js";

const statuses = (plan: AnswerPlan, n: number, signatureOk = true) =>
  Array.from({ length: n }, () => {
    const action = plan.next(signatureOk);
    return action.kind === "answer" ? action.status : action.kind;
  });

describe("AnswerPlan", () => {
  it("answers --respond normally and 401 for a failed signature", () => {
    const plan = new AnswerPlan({ respond: 202 });
    expect(plan.next(true)).toEqual({ kind: "answer", status: 202, injected: false, delayMs: 0 });
    expect(plan.next(false)).toEqual({ kind: "answer", status: 401, injected: false, delayMs: 0 });
  });

  it("--fail-first N answers --fail-status (default 503) to the first N, whatever the signature", () => {
    expect(statuses(new AnswerPlan({ failFirst: 2 }), 4)).toEqual([503, 503, 200, 200]);
    expect(statuses(new AnswerPlan({ failFirst: 1, failStatus: 500 }), 2, false)).toEqual([500, 401]);
    expect(new AnswerPlan({ failFirst: 1 }).next(true)).toMatchObject({ injected: true });
  });

  it("--fail-rate is reproducible with the same seed and close to the rate", () => {
    const run = (seed: number) => statuses(new AnswerPlan({ failRate: 0.3, random: seededRandom(seed) }), 1000);
    expect(run(42)).toEqual(run(42));
    expect(run(42)).not.toEqual(run(43));
    const failures = run(42).filter((s) => s === 503).length;
    expect(failures).toBeGreaterThan(230);
    expect(failures).toBeLessThan(370);
    expect(statuses(new AnswerPlan({ failRate: 1 }), 3)).toEqual([503, 503, 503]);
    expect(statuses(new AnswerPlan({ failRate: 0 }), 3)).toEqual([200, 200, 200]);
  });

  it("--script overrides the rest request by request, then repeats its last entry", () => {
    const plan = new AnswerPlan({ failFirst: 10, script: parseScript("503,timeout,200,drop") });
    expect(statuses(plan, 6)).toEqual([503, "timeout", 200, "drop", "drop", "drop"]);
    expect(statuses(new AnswerPlan({ script: parseScript("500,204") }), 4, false)).toEqual([500, 204, 204, 204]);
  });

  it("--delay holds every answer, injected or not", () => {
    const plan = new AnswerPlan({ delayMs: 250, failFirst: 1 });
    expect(plan.next(true)).toMatchObject({ status: 503, delayMs: 250 });
    expect(plan.next(true)).toMatchObject({ status: 200, delayMs: 250 });
    expect(new AnswerPlan({ delayMs: 100, script: [{ kind: "drop" }] }).next(true)).toEqual({ kind: "drop", delayMs: 100 });
  });
});

describe("parseScript", () => {
  it("parses statuses, timeout and drop", () => {
    expect(parseScript("503, 503,TIMEOUT,200,drop")).toEqual([
      { kind: "status", status: 503 },
      { kind: "status", status: 503 },
      { kind: "timeout" },
      { kind: "status", status: 200 },
      { kind: "drop" },
    ]);
  });

  it("names the bad entry and the flag", () => {
    for (const text of ["503,abc", "600", "", "200,,200", "20"]) {
      let error: unknown;
      try {
        parseScript(text);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(WebhookCliError);
      expect((error as WebhookCliError).code).toBe("E_USAGE");
      expect(describeError(error as WebhookCliError)).toMatch(/^--script: entry \d+ /);
    }
  });
});
