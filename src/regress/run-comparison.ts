import { compareAnswers, labelOf, type CompareOptions, type CompareSummary, type MessageComparison } from "./message-comparison.js";
import type { Answer } from "./results-read.js";

/**
 * The old side of a comparison, in line order. The new answers come in line
 * order too (ResultsOrder releases them so), so the two are merged like two
 * sorted lists and neither side is ever held whole.
 */
export interface OldAnswers {
  /** The old answer for `line`, after every older one not taken goes to `passed`. Lines ascend from call to call. */
  take(line: number, passed: (old: Answer) => void): Answer | undefined;
  /** Hands at most `budget` of the answers not taken to `passed`; false once none is left. */
  rest(passed: (old: Answer) => void, budget?: number): boolean;
}

/**
 * A whole `--compare` run: the new answers fed in line order as they are
 * released, each compared with the old answer for its line as the old side
 * reaches it. `inScope` says which old answers this run could have given
 * (its --line, --type, --shard…), so only those count as missing, and a shard
 * compared with the whole old file reports only its own lines.
 */
export class Comparison {
  private readonly counts: CompareSummary = { same: 0, changed: 0, new: 0, missing: 0 };
  private readonly missing: number[] = [];
  private lastLine = 0;

  constructor(
    private readonly old: OldAnswers,
    private readonly options: CompareOptions = {},
    private readonly inScope: (old: Answer) => boolean = () => true,
  ) {}

  /** Compares one new answer with the old one for its line. */
  add(answer: Answer): MessageComparison {
    if (answer.line <= this.lastLine) throw new RangeError(`line ${answer.line} compared after line ${this.lastLine}: answers must come in line order`);
    this.lastLine = answer.line;
    const before = this.old.take(answer.line, this.passed);
    const label = labelOf(answer);
    if (before === undefined) {
      this.counts.new += 1;
      return { line: answer.line, label, status: "new", changes: [] };
    }
    const changes = compareAnswers(before, answer, this.options);
    this.counts[changes.length > 0 ? "changed" : "same"] += 1;
    return { line: answer.line, label, status: changes.length > 0 ? "changed" : "same", changes };
  }

  /**
   * Reads the old answers no new one came for, a slice at a time so the
   * process still hears a signal; false when `signal` stopped it first.
   */
  async drain(signal?: AbortSignal): Promise<boolean> {
    while (this.old.rest(this.passed, 1000)) {
      if (signal?.aborted) return false;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return true;
  }

  /**
   * The summary, and the old lines in scope that got no new answer (read to
   * the end first). An interrupted run did not reach the rest: none is missing.
   */
  finish(interrupted = false): { summary: CompareSummary; missing: number[] } {
    if (interrupted) return { summary: { ...this.counts, missing: 0 }, missing: [] };
    while (this.old.rest(this.passed));
    return { summary: { ...this.counts, missing: this.missing.length }, missing: this.missing };
  }

  private readonly passed = (old: Answer): void => {
    if (this.inScope(old)) this.missing.push(old.line);
  };
}

/** Old answers held in memory (tests, the library), read in line order. */
export function answersInOrder(answers: ReadonlyMap<number, Answer>): OldAnswers {
  const lines = [...answers.keys()].sort((a, b) => a - b);
  let next = 0;
  const at = (index: number): Answer => answers.get(lines[index] as number) as Answer;
  return {
    take(line, passed) {
      while (next < lines.length && (lines[next] as number) < line) passed(at(next++));
      return lines[next] === line ? at(next++) : undefined;
    },
    rest(passed, budget = Infinity) {
      for (let n = 0; n < budget && next < lines.length; n++) passed(at(next++));
      return next < lines.length;
    },
  };
}

/** Both sides in memory (tests, the library). */
export function compareResults(
  old: ReadonlyMap<number, Answer>,
  now: ReadonlyMap<number, Answer>,
  options: CompareOptions = {},
): { summary: CompareSummary; changed: MessageComparison[]; added: number[]; missing: number[] } {
  const comparison = new Comparison(answersInOrder(old), options);
  const changed: MessageComparison[] = [];
  const added: number[] = [];
  for (const line of [...now.keys()].sort((a, b) => a - b)) {
    const result = comparison.add(now.get(line) as Answer);
    if (result.status === "changed") changed.push(result);
    else if (result.status === "new") added.push(line);
  }
  return { ...comparison.finish(), changed, added };
}

/** `compared with OLD: 96 same, 3 changed, 1 new, 0 missing`. */
export function formatCompareSummary(name: string, summary: CompareSummary): string {
  return `compared with ${name}: ${summary.same} same, ${summary.changed} changed, ${summary.new} new, ${summary.missing} missing`;
}

/** Exit 1 when a message's answer changed; new and missing lines are reported, not failed. */
export function comparisonFailed(summary: CompareSummary): boolean {
  return summary.changed > 0;
}
