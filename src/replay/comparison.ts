import { compareAnswers, labelOf, type CompareOptions, type CompareSummary, type MessageComparison } from "./compare.js";
import type { Answer } from "./results-read.js";

/**
 * A whole `--compare` run: the old answers in memory (keyed by line), the new
 * ones fed in as they are released, so the new run's bodies are never all held.
 */
export class Comparison {
  private readonly seen = new Set<number>();
  private readonly counts: CompareSummary = { same: 0, changed: 0, new: 0, missing: 0 };

  constructor(
    private readonly old: ReadonlyMap<number, Answer>,
    private readonly options: CompareOptions = {},
  ) {}

  /** Compares one new answer with the old one for its line. */
  add(answer: Answer): MessageComparison {
    this.seen.add(answer.line);
    const before = this.old.get(answer.line);
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
   * The summary, and the old lines that got no new answer. `inScope` limits
   * "missing" to the lines this run selected (--line, --type, --shard…), so a
   * shard compared with the whole old file reports only its own lines.
   */
  finish(inScope: (line: number) => boolean = () => true): { summary: CompareSummary; missing: number[] } {
    const missing: number[] = [];
    for (const line of this.old.keys()) {
      if (!this.seen.has(line) && inScope(line)) missing.push(line);
    }
    missing.sort((a, b) => a - b);
    return { summary: { ...this.counts, missing: missing.length }, missing };
  }
}

/** Both sides in memory (tests, the library). */
export function compareResults(
  old: ReadonlyMap<number, Answer>,
  now: ReadonlyMap<number, Answer>,
  options: CompareOptions = {},
): { summary: CompareSummary; changed: MessageComparison[]; added: number[]; missing: number[] } {
  const comparison = new Comparison(old, options);
  const changed: MessageComparison[] = [];
  const added: number[] = [];
  for (const line of [...now.keys()].sort((a, b) => a - b)) {
    const result = comparison.add(now.get(line) as Answer);
    if (result.status === "changed") changed.push(result);
    else if (result.status === "new") added.push(line);
  }
  return { ...comparison.finish(), changed, added };
}

/** One output line per difference: `line 12 (track Order Completed, user-42): status 200 → 500`. */
export function formatComparison(result: MessageComparison): string[] {
  return result.changes.map((change) => `line ${result.line} (${result.label}): ${change}`);
}

/** `compared with OLD: 96 same, 3 changed, 1 new, 0 missing`. */
export function formatCompareSummary(name: string, summary: CompareSummary): string {
  return `compared with ${name}: ${summary.same} same, ${summary.changed} changed, ${summary.new} new, ${summary.missing} missing`;
}

/** Exit 1 when a message's answer changed; new and missing lines are reported, not failed. */
export function comparisonFailed(summary: CompareSummary): boolean {
  return summary.changed > 0;
}
