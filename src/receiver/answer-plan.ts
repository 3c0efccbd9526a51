import { UsageError } from "../errors.js";
import type { Random } from "../util/clock.js";

/** One entry of `--script`: answer with a status, hold until the sender gives up, or close the connection. */
export type ScriptStep = { kind: "status"; status: number } | { kind: "timeout" } | { kind: "drop" };

export interface AnswerPlanOptions {
  /** Status for normal requests (default 200); a failed signature gets 401 instead. */
  respond?: number | undefined;
  /** Hold every answer this long. */
  delayMs?: number | undefined;
  /** Answer the first N requests with `failStatus`. */
  failFirst?: number | undefined;
  /** Probability (0–1) of answering `failStatus`. */
  failRate?: number | undefined;
  /** Default 503. */
  failStatus?: number | undefined;
  /** Overrides the rest, request by request, then repeats its last entry. */
  script?: readonly ScriptStep[] | undefined;
  /** Drawn once per request that `failRate` decides; seed it for reproducible runs. */
  random?: Random | undefined;
}

/**
 * What the fault flags make of one request. `injected` answers come from the fault flags, not the
 * signature rule; what they leave to the signature rule, a scripted answer or the app may take
 * (answer-decision.ts).
 */
export type PlannedAnswer = { kind: "answer"; status: number; injected: boolean; delayMs: number } | { kind: "timeout" } | { kind: "drop"; delayMs: number };

/**
 * The plan that decides every answer, pure and in request order: the fault flags
 * (docs/receiver.md#fault-injection) `--script` first, then `--fail-first`, then `--fail-rate`, else
 * the signature rule (`--respond`, or 401 for a failed signature). `--delay` holds every answer.
 */
export class AnswerPlan {
  private index = 0;
  private readonly respond: number;
  private readonly delayMs: number;
  private readonly failFirst: number;
  private readonly failRate: number;
  private readonly failStatus: number;
  private readonly script: readonly ScriptStep[];
  private readonly random: Random;
  // The two common answers, allocated once: this runs for every request.
  private readonly normal: PlannedAnswer;
  private readonly unauthorized: PlannedAnswer;

  constructor(options: AnswerPlanOptions = {}) {
    this.respond = options.respond ?? 200;
    this.delayMs = options.delayMs ?? 0;
    this.failFirst = options.failFirst ?? 0;
    this.failRate = options.failRate ?? 0;
    this.failStatus = options.failStatus ?? 503;
    this.script = options.script ?? [];
    this.random = options.random ?? Math.random;
    this.normal = { kind: "answer", status: this.respond, injected: false, delayMs: this.delayMs };
    this.unauthorized = { kind: "answer", status: 401, injected: false, delayMs: this.delayMs };
  }

  /** The answer to the next request; `signatureOk` is false only for a failed signature. */
  next(signatureOk: boolean): PlannedAnswer {
    const index = this.index++;
    const delayMs = this.delayMs;
    if (this.script.length > 0) {
      const step = this.script[Math.min(index, this.script.length - 1)] as ScriptStep;
      if (step.kind === "timeout") return step;
      if (step.kind === "drop") return { kind: "drop", delayMs };
      return { kind: "answer", status: step.status, injected: true, delayMs };
    }
    if (index < this.failFirst || (this.failRate > 0 && this.random() < this.failRate)) {
      return { kind: "answer", status: this.failStatus, injected: true, delayMs };
    }
    return signatureOk ? this.normal : this.unauthorized;
  }
}

/** Parses `--script 503,503,timeout,200,drop`; the error names the entry. */
export function parseScript(text: string): ScriptStep[] {
  const entries = text.split(",").map((entry) => entry.trim());
  return entries.map((entry, i): ScriptStep => {
    const lower = entry.toLowerCase();
    if (lower === "timeout") return { kind: "timeout" };
    if (lower === "drop") return { kind: "drop" };
    const status = Number(entry);
    if (/^\d{3}$/.test(entry) && status >= 200 && status <= 599) return { kind: "status", status };
    throw new UsageError(`entry ${i + 1} "${entry}" of "${text}": expected an HTTP status (200-599), timeout or drop`, { field: "script" });
  });
}
