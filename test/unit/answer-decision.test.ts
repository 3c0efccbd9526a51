import { describe, expect, it } from "vitest";
import { decideAnswer, type AnswerInputs } from "../../src/receiver/answer-decision.js";
import type { PlannedAnswer } from "../../src/receiver/answer-plan.js";
import type { PickedAnswer, ScriptedAnswer } from "../../src/receiver/scripted-answers.js";

const plain: PlannedAnswer = { kind: "answer", status: 200, injected: false, delayMs: 0 };
const delayed: PlannedAnswer = { kind: "answer", status: 200, injected: false, delayMs: 250 };
const unauthorized: PlannedAnswer = { kind: "answer", status: 401, injected: false, delayMs: 0 };
const injected: PlannedAnswer = { kind: "answer", status: 503, injected: true, delayMs: 0 };

const teapot: ScriptedAnswer = { status: 418, headers: { "content-type": "text/plain" }, body: Buffer.from("short and stout"), delayMs: undefined };
const byRule: PickedAnswer = { rule: 2, answer: teapot };
/** --respond-header/--respond-body: the default answer keeps the status it is given. */
const byDefault = (status: number): PickedAnswer => ({ rule: null, answer: { status, headers: { "x-env": "test" }, body: null, delayMs: undefined } });

/** Inputs with a signature that passed, no scripted answers and no app, unless given. */
const inputs = (given: Partial<AnswerInputs<string>> = {}): AnswerInputs<string> => ({ signatureOk: true, pick: undefined, relay: undefined, ...given });

describe("decideAnswer: how one request is answered, decided once", () => {
  it("without scripted answers or an app, the answer plan's answer stands as it is", () => {
    expect(decideAnswer(plain, inputs())).toBe(plain);
    expect(decideAnswer(unauthorized, inputs({ signatureOk: false }))).toBe(unauthorized);
  });

  it("a fault (an injected status, a hold, a drop) stands: no rule is asked, no app is called", () => {
    const pick = (): PickedAnswer => {
      throw new Error("a fault asked the rules");
    };
    expect(decideAnswer(injected, inputs({ pick, relay: "app" }))).toBe(injected);
    expect(decideAnswer({ kind: "timeout" }, inputs({ pick, relay: "app" }))).toEqual({ kind: "timeout" });
    expect(decideAnswer({ kind: "drop", delayMs: 100 }, inputs({ pick, relay: "app" }))).toEqual({ kind: "drop", delayMs: 100 });
  });

  it("a matching --responses rule answers with its status, even when forwarding, and names the rule", () => {
    const asked: number[] = [];
    const pick = (status: number): PickedAnswer => {
      asked.push(status);
      return byRule;
    };
    const scripted = { kind: "answer", status: 418, injected: false, delayMs: 0, scripted: byRule };
    expect(decideAnswer(plain, inputs({ pick }))).toEqual(scripted);
    expect(decideAnswer(plain, inputs({ pick, relay: "app" }))).toEqual(scripted);
    expect(asked).toEqual([200, 200]);
  });

  it("a rule's own delay replaces --delay; without one, --delay holds the scripted answer too", () => {
    const slow: PickedAnswer = { rule: 0, answer: { ...teapot, delayMs: 1_000 } };
    expect(decideAnswer(delayed, inputs({ pick: () => slow }))).toMatchObject({ status: 418, delayMs: 1_000 });
    expect(decideAnswer(delayed, inputs({ pick: () => byRule }))).toMatchObject({ status: 418, delayMs: 250 });
  });

  it("a failed signature is never scripted: the signature rule's 401 stands, or the app answers", () => {
    const pick = (): PickedAnswer => byRule;
    expect(decideAnswer(unauthorized, inputs({ signatureOk: false, pick }))).toBe(unauthorized);
    expect(decideAnswer(unauthorized, inputs({ signatureOk: false, pick, relay: "app" }))).toEqual({ kind: "relay", delayMs: 0, relay: "app" });
  });

  it("when forwarding, the app answers what no rule matched, held by --delay first; the default answer is not used", () => {
    expect(decideAnswer(delayed, inputs({ relay: "app" }))).toEqual({ kind: "relay", delayMs: 250, relay: "app" });
    expect(decideAnswer(plain, inputs({ pick: byDefault, relay: "app" }))).toEqual({ kind: "relay", delayMs: 0, relay: "app" });
    expect(decideAnswer(plain, inputs({ pick: () => undefined, relay: "app" }))).toEqual({ kind: "relay", delayMs: 0, relay: "app" });
  });

  it("without an app, the --respond-header/--respond-body default answers with the status the plan gave", () => {
    const respond: PlannedAnswer = { kind: "answer", status: 202, injected: false, delayMs: 0 };
    expect(decideAnswer(respond, inputs({ pick: byDefault }))).toEqual({ kind: "answer", status: 202, injected: false, delayMs: 0, scripted: byDefault(202) });
    expect(decideAnswer(plain, inputs({ pick: () => undefined }))).toBe(plain);
  });
});
