import type { PlannedAnswer } from "./answer-plan.js";
import type { PickedAnswer } from "./scripted-answers.js";

/**
 * How listen answers one complete request, decided once: its own answer (the fault flags', the
 * signature rule's or a scripted one), the app's (`relay`, listen --forward-to), a hold or a drop.
 * `R` is the relay that carries the request to the app.
 */
export type AnswerDecision<R> =
  | { kind: "answer"; status: number; injected: boolean; delayMs: number; scripted?: PickedAnswer }
  | { kind: "relay"; delayMs: number; relay: R }
  | { kind: "timeout" }
  | { kind: "drop"; delayMs: number };

/** An answer listen gives itself (all but a relay). */
export type OwnAnswer = Exclude<AnswerDecision<unknown>, { kind: "relay" }>;

export interface AnswerInputs<R> {
  /** False only for a failed signature. */
  signatureOk: boolean;
  /** The scripted answer for the request (a --responses rule, or the --respond-header/--respond-body default), given the status it would get. */
  pick: ((status: number) => PickedAnswer | undefined) | undefined;
  /** The app the request is forwarded to, or undefined when listen answers it. */
  relay: R | undefined;
}

/**
 * The answer to one request, from what the answer plan (the fault flags) gave it
 * (docs/receiver.md#fault-injection, docs/receiver.md#scripted-answers): an injected status, hold or
 * drop stands; otherwise a matching --responses rule answers, even when forwarding; else the app
 * answers when forwarding; else the --respond-header/--respond-body default, or the signature rule.
 * A failed signature is never scripted. Pure: `pick` only reads the rules.
 */
export function decideAnswer<R>(planned: PlannedAnswer, { signatureOk, pick, relay }: AnswerInputs<R>): AnswerDecision<R> {
  if (planned.kind !== "answer" || planned.injected) return planned;
  const picked = signatureOk && pick !== undefined ? pick(planned.status) : undefined;
  if (picked !== undefined && (picked.rule !== null || relay === undefined)) {
    return { kind: "answer", status: picked.answer.status, injected: false, delayMs: picked.answer.delayMs ?? planned.delayMs, scripted: picked };
  }
  return relay === undefined ? planned : { kind: "relay", delayMs: planned.delayMs, relay };
}
