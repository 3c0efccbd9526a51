import { createReadStream } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../../../errors.js";
import type { DeliveryResult } from "../../../delivery/types.js";
import type { ReplayEntry } from "../../../replay/envelope.js";
import type { ReplayOptions } from "../../../replay/types.js";
import { formatComparison, type CompareSummary, type MessageComparison } from "../../../regress/message-comparison.js";
import { Comparison, comparisonFailed, formatCompareSummary } from "../../../regress/run-comparison.js";
import { OldResults } from "../../../regress/old-results.js";
import { spoolToTempFile } from "../../../replay/spool.js";
import { parseExpectStatus, unexpectedStatuses, type ExpectedStatuses } from "../../../regress/expect-status.js";
import { parseJsonPath, type JsonPath } from "../../../regress/jsonpath.js";
import { comparisonCase, withExpectStatus, type JunitCase } from "../../../report/junit.js";
import { answerOfResult, type Answer } from "../../../regress/results-read.js";
import { scanResults } from "../../../regress/results-file.js";
import { createSelection, parseIds, parseLineRange, type LineRange, type Selection } from "../../../replay/select.js";
import { parseShard, type Shard } from "../../../replay/shard.js";
import type { ResultLine } from "../../../regress/results.js";
import type { CliIo } from "../../terminal/io.js";
import type { ReplayFlags } from "./options.js";
import type { Output } from "../../terminal/output.js";
import { printable } from "../../../safe-text/printable.js";
import { cannotRead, isReadableFile } from "../../../util/readable-file.js";
import { sameFile } from "../../../util/same-file.js";

/**
 * replay as a regression test: the selectors, `--results`,
 * `--compare` with `--ignore`, and `--expect-status`, as the replay command
 * reports them. The pure parts live in src/regress/.
 */
export interface RegressFlags {
  lines?: LineRange[] | undefined;
  messageIds?: string[] | undefined;
  userIds?: string[] | undefined;
  shard?: Shard | undefined;
  results?: string | undefined;
  compare?: string | undefined;
  ignore?: JsonPath[] | undefined;
  expectStatus?: ExpectedStatuses | undefined;
}

/** The option table's values (./options.ts) as typed flags; a bad value is a UsageError naming its flag. */
export function parseRegressFlags(
  raw: Pick<ReplayFlags, "lines" | "messageIds" | "userIds" | "shard" | "results" | "compare" | "ignore" | "expectStatus">,
): RegressFlags {
  return {
    lines: raw.lines?.map((value) => parseLineRange(value)),
    messageIds: raw.messageIds === undefined ? undefined : parseIds(raw.messageIds, "messageIds"),
    userIds: raw.userIds === undefined ? undefined : parseIds(raw.userIds, "userIds"),
    shard: raw.shard === undefined ? undefined : parseShard(raw.shard),
    results: raw.results,
    compare: raw.compare,
    ignore: raw.ignore?.map((value) => parseJsonPath(value)),
    expectStatus: raw.expectStatus === undefined ? undefined : parseExpectStatus(raw.expectStatus),
  };
}

/**
 * The run's selection, assembled once from every selecting flag: replay() sends by it and
 * --compare scopes the old file by it.
 */
export function selectionOfFlags(flags: RegressFlags, types: readonly string[] | undefined, fromLine: number | undefined): Selection {
  const { lines, messageIds, userIds, shard } = flags;
  return createSelection({ lines, messageIds, userIds, shard, types, fromLine });
}

/**
 * The results file may not be the --compare file: the run would append its answers to the
 * answers it compares them with. Checked before anything is read (a dry run writes no results).
 */
export function refuseCompareAsResults(flags: Pick<ReplayFlags, "results" | "compare">, cwd: string): void {
  if (flags.results === undefined || flags.compare === undefined) return;
  const results = resolve(cwd, flags.results);
  if (sameFile(results, resolve(cwd, flags.compare)))
    throw new UsageError("the results file cannot be the `compare` file", { field: "results", file: results });
}

// Changed messages listed one by one up to this many; the rest are counted (JUnit and --json get all).
const LISTED_CHANGES = 100;

/**
 * Checks the --compare file before anything is sent (a bad one is exit 2),
 * then compares answers as the run releases them, reading the file beside the
 * run (old-results.ts), checks --expect-status per message, and reports both
 * after the replay summary.
 */
export class RegressReporter {
  private comparison: Comparison | undefined;
  private old: OldResults | undefined;
  private removeSpool: (() => void) | undefined;
  private readonly changed: MessageComparison[] = [];
  private readonly junitChanged: JunitCase[] = [];
  private readonly unexpected = new Map<number, string[]>();
  private unexpectedCount = 0;
  private summary: CompareSummary | undefined;

  private constructor(
    private readonly output: Output,
    private readonly flags: RegressFlags & { junit?: string | undefined },
    private readonly name: string,
    /** The lines this run selects, the same object replay() is given: an old answer outside them is not missing from it. */
    private readonly selection: Selection,
  ) {}

  static async open(output: Output, flags: RegressReporter["flags"], io: CliIo, name: string, selection: Selection): Promise<RegressReporter> {
    const reporter = new RegressReporter(output, flags, name, selection);
    try {
      if (flags.compare !== undefined) await reporter.openComparison(flags.compare, io);
    } catch (error) {
      reporter.close();
      throw error;
    }
    return reporter;
  }

  /** Scans the old file (nothing kept), then opens it for reading beside the run. */
  private async openComparison(compare: string, io: CliIo): Promise<void> {
    let path = resolve(io.cwd, compare);
    const isFile = isReadableFile(path, { flag: "--compare", file: compare });
    const signal = io.signal ? { signal: io.signal } : {};
    if (!isFile) {
      // A pipe (`--compare <(zcat old.ndjson.gz)`) is read twice, so it is copied to a temporary file first, as stdin is.
      const spool = await spoolToTempFile(createReadStream(path), io.signal).catch((error: unknown) => {
        if (io.signal?.aborted) return undefined;
        throw cannotRead(error, { flag: "--compare", file: compare });
      });
      if (spool === undefined) return;
      this.removeSpool = spool.remove;
      path = spool.path;
    }
    const index = await scanResults(path, compare, signal);
    // Interrupted while checking: nothing will be sent, so nothing is compared.
    if (index === undefined) return;
    const { selection } = this;
    this.old = new OldResults(path, compare, index, { wanted: selection.lineMayMatch, last: selection.lastLine });
    const inScope = (old: Answer): boolean =>
      selection.matches({ line: old.line, type: old.facts.type, userId: old.facts.userId, messageId: old.facts.messageId });
    this.comparison = new Comparison(this.old, { ignore: this.flags.ignore }, inScope);
  }

  /** What replay() takes: the selection, the results file, the comparison's feed. */
  replayOptions(io: CliIo): Pick<ReplayOptions, "selection" | "results" | "onResults"> {
    const { results, compare } = this.flags;
    return {
      selection: this.selection,
      results: results === undefined ? undefined : resolve(io.cwd, results),
      onResults: compare === undefined ? undefined : (released) => this.compare(released),
    };
  }

  /** Wraps replay's per-message hook: --expect-status is checked first, so `junitCase` sees it. */
  onMessage(inner: ReplayOptions["onMessage"]): ReplayOptions["onMessage"] {
    if (this.flags.expectStatus === undefined) return inner;
    return (entry, result, ms) => {
      this.checkStatus(entry, result);
      inner?.(entry, result, ms);
    };
  }

  /** Replay's JUnit case for a message, with its --expect-status failure added. */
  junitCase(entry: ReplayEntry, test: JunitCase): JunitCase {
    const problems = this.unexpected.get(entry.line);
    if (problems === undefined) return test;
    this.unexpected.delete(entry.line);
    return withExpectStatus(test, problems);
  }

  /** The comparison's failing cases, after replay's. */
  get junitCases(): readonly JunitCase[] {
    return this.junitChanged;
  }

  /**
   * After a run that was not interrupted: reads the rest of the old file for the
   * lines this run did not answer. False when the stop signal came first.
   */
  async settle(signal: AbortSignal | undefined): Promise<boolean> {
    return this.comparison === undefined || this.comparison.drain(signal);
  }

  /** After the replay summary: the diffs, the comparison's summary, the --expect-status count. */
  report(interrupted: boolean): void {
    if (this.flags.compare !== undefined) this.reportComparison(this.comparison, interrupted);
    if (this.flags.expectStatus !== undefined && this.unexpectedCount > 0) {
      const n = this.unexpectedCount;
      this.output.line(`${n} message${n === 1 ? "" : "s"} answered outside --expect-status ${this.flags.expectStatus.text}`);
    }
  }

  /** Something changed, or an answer was outside --expect-status: exit 1. */
  get failed(): boolean {
    return (this.summary !== undefined && comparisonFailed(this.summary)) || this.unexpectedCount > 0;
  }

  /** The old file, and its temporary copy when it was a pipe. */
  close(): void {
    this.old?.close();
    this.old = undefined;
    this.removeSpool?.();
    this.removeSpool = undefined;
  }

  private compare(released: readonly ResultLine[]): void {
    // Interrupted while the old file was checked: the run sends nothing.
    if (this.comparison === undefined) return;
    for (const line of released) {
      const result = this.comparison.add(answerOfResult(line));
      if (result.status === "same") continue;
      this.output.event("compare", { line: result.line, label: result.label, status: result.status, changes: result.changes });
      if (result.status !== "changed") continue;
      if (this.changed.length < LISTED_CHANGES) this.changed.push(result);
      if (this.flags.junit !== undefined) this.junitChanged.push(comparisonCase(result));
    }
  }

  private reportComparison(comparison: Comparison | undefined, interrupted: boolean): void {
    // An interrupted run did not reach the rest: those lines are not missing answers.
    const { summary, missing } = comparison?.finish(interrupted) ?? { summary: { same: 0, changed: 0, new: 0, missing: 0 }, missing: [] };
    this.summary = summary;
    const { output } = this;
    for (const result of this.changed) for (const text of formatComparison(result)) output.line(`${output.color.red("≠")} ${printable(text)}`);
    if (summary.changed > this.changed.length) output.line(`… and ${summary.changed - this.changed.length} more changed messages`);
    if (missing.length > 0) output.line(`missing from this run: line${missing.length === 1 ? "" : "s"} ${listed(missing)}`);
    output.line(formatCompareSummary(this.flags.compare as string, summary));
    output.event("compareSummary", { compare: this.flags.compare, ...summary, missingLines: missing });
  }

  private checkStatus(entry: ReplayEntry, result: DeliveryResult | undefined): void {
    if (result === undefined || result.interrupted) return;
    const problems = unexpectedStatuses(result.urls, this.flags.expectStatus as ExpectedStatuses);
    if (problems.length === 0) return;
    // Kept only until replay's JUnit case for the message is built, right after this.
    if (this.flags.junit !== undefined) this.unexpected.set(entry.line, problems);
    this.unexpectedCount += 1;
    const { output } = this;
    output.event("unexpectedStatus", { line: entry.line, type: entry.type ?? null, userId: entry.orderKey ?? null, problems });
    const user = entry.orderKey !== undefined ? ` ${printable(entry.orderKey)}` : "";
    output.line(`${output.color.red("✗")} ${this.name}:${entry.line} ${entry.type ?? "raw"}${user}: ${printable(problems.join("; "))}`);
  }
}

/** `3, 8, 13` with the rest counted. */
function listed(lines: readonly number[]): string {
  const shown = lines.slice(0, 20).join(", ");
  return lines.length > 20 ? `${shown} … (${lines.length} in all)` : shown;
}
