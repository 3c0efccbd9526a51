import { isUtf8 } from "node:buffer";
import { factsOf, matches, type RequestFacts, type RequestMatch } from "./match.js";
import type { RequestVerdict } from "./verdict.js";

/*
 * Scripted answers (docs/receiver.md#scripted-answers): the rules of --responses, first match
 * wins, and the headers and body --respond-header and --respond-body give the default answer.
 * Checked once when they are made (rules-file.ts); per request only the match runs.
 */

/** One answer, ready to send: the headers are made once, not per request. */
export interface ScriptedAnswer {
  status: number;
  /** Lower-case names; a repeated name has its values in order. Content-Type is set unless `echo` decides it. */
  headers: Readonly<Record<string, string | readonly string[]>>;
  /** The body, or `echo` for the request's own bytes (and its Content-Type), or null for listen's own `{"ok":true}`. */
  body: Buffer | "echo" | null;
  /** Replaces --delay for this answer. */
  delayMs: number | undefined;
}

export interface AnswerRule {
  match: RequestMatch;
  respond: ScriptedAnswer;
}

/** What answered a request: the index of the rule in its list, and its answer. */
export interface PickedAnswer {
  rule: number | null;
  answer: ScriptedAnswer;
}

/** The rules (first match wins) and the default answer's extra headers and body; swapped whole by setRules. */
export class ScriptedAnswers {
  private rules: readonly AnswerRule[];

  constructor(
    rules: readonly AnswerRule[] = [],
    /** --respond-header and --respond-body: the default answer's headers and body (its status stays --respond). */
    private readonly fallback: Omit<ScriptedAnswer, "status" | "delayMs"> | undefined = undefined,
  ) {
    this.rules = rules;
  }

  /** Replaces the rules (the library's per-test scripting); requests already decided keep their answer. */
  setRules(rules: readonly AnswerRule[]): void {
    this.rules = rules;
  }

  get hasRules(): boolean {
    return this.rules.length > 0;
  }

  /** The first rule that matches, else the default answer with `status` when --respond-header/--respond-body gave one, else undefined. */
  pick(request: { method: string; path: string; verdict: RequestVerdict }, status: number): PickedAnswer | undefined {
    if (this.rules.length > 0) {
      const facts: RequestFacts = factsOf(request);
      const index = this.rules.findIndex((rule) => matches(rule.match, facts));
      if (index >= 0) return { rule: index, answer: (this.rules[index] as AnswerRule).respond };
    }
    return this.fallback ? { rule: null, answer: { ...this.fallback, status, delayMs: undefined } } : undefined;
  }
}

/** The Content-Type a body gets when no header names one: JSON, text, or bytes. */
export function contentTypeOf(body: Buffer): string {
  if (!isUtf8(body)) return "application/octet-stream";
  try {
    JSON.parse(body.toString("utf8"));
    return "application/json";
  } catch {
    return "text/plain; charset=utf-8";
  }
}

/** Headers as a scripted answer sends them: lower-case names, repeats kept, Content-Type added for a body that has none. */
export function answerHeaders(pairs: readonly (readonly [string, string])[], body: Buffer | "echo" | null): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    const previous = headers[key];
    headers[key] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  if (headers["content-type"] === undefined && Buffer.isBuffer(body)) headers["content-type"] = contentTypeOf(body);
  return headers;
}
