import type { InvocationState } from "../../../functions/invocation.js";
import type { BatchRecord, InvocationRecord, Outcome } from "../../../functions/types.js";
import type { InputMessage } from "../../../messages/input.js";
import { formatDuration } from "../../../util/duration.js";
import { printable } from "../../../safe-text/printable.js";
import { detailLines, type InvocationDetails, invocationJson as jsonOf, outcomeMark, verdict } from "../../terminal/invocation-lines.js";
import type { Output } from "../../terminal/output.js";

export interface Tally {
  delivered: number;
  skipped: number;
  failed: number;
  retry: number;
}

const emptyTally = (): Tally => ({ delivered: 0, skipped: 0, failed: 0, retry: 0 });

/** `N delivered, N skipped, N failed, N to be retried`: a batch's line and the summary (`success` is a source's `accepted`). */
export function tallyText(tally: Tally, success = "delivered"): string {
  return `${tally.delivered} ${success}, ${tally.skipped} skipped, ${tally.failed} failed, ${tally.retry} to be retried`;
}

/**
 * Prints what each invocation did (docs/commands/function.md#output): a line with the handler,
 * the input and the outcome, then its return or error, console output, fetches and `Segment`
 * calls; under --json one `invocation` object each. Counts outcomes per event for the summary.
 */
export class InvocationReport {
  readonly tally: Tally = emptyTally();
  /** The first outcome that is a setup problem (a package to install), to end the run with. */
  setupProblem: string | undefined;

  constructor(
    private readonly output: Output,
    private readonly file: string,
  ) {}

  atLoad(state: InvocationState): void {
    if (state.logs.length === 0 && state.fetches.length === 0) return;
    this.output.event("load", { file: this.file, logs: state.logs, fetches: state.fetches });
    this.output.line(`${this.file}: while loading`);
    this.details({ logs: state.logs, logsDropped: state.logsDropped, fetches: state.fetches, fetchesDropped: state.fetchesDropped, messages: [], objects: [] });
  }

  event(input: InputMessage, record: InvocationRecord): void {
    this.count([record.outcome]);
    this.output.event("invocation", { input: describeInput(input), ...jsonOf(record) });
    this.output.line(
      `${this.mark(record.outcome)} ${record.handler ?? "(no handler)"}: ${labelOf(input)} → ${verdict(record.outcome, "delivered")} (${formatDuration(record.ms)})`,
    );
    this.details(record);
  }

  batch(inputs: readonly InputMessage[], record: BatchRecord): void {
    const counts = this.count(record.events);
    this.output.event("invocation", {
      input: { events: inputs.map(describeInput) },
      ...jsonOf(record),
      events: record.events.map((outcome, i) => ({ ...describeInput(inputs[i] as InputMessage), outcome })),
    });
    const range = inputs.length > 1 ? `${inputs[0]?.where} … ${inputs.at(-1)?.where}` : (inputs[0]?.where ?? "");
    this.output.line(`${this.mark(record.outcome)} onBatch: ${inputs.length} events (${range}) → ${tallyText(counts)} (${formatDuration(record.ms)})`);
    this.details(record);
    record.events.forEach((outcome, i) => {
      if (outcome.kind !== "delivered") this.output.line(`    ${labelOf(inputs[i] as InputMessage)} → ${verdict(outcome, "delivered")}`);
    });
  }

  request(url: string, record: InvocationRecord): void {
    this.count([record.outcome]);
    this.output.event("invocation", { input: { request: { method: "POST", url } }, ...jsonOf(record) });
    this.output.line(`${this.mark(record.outcome)} onRequest: POST ${printable(url)} → ${verdict(record.outcome, "accepted")} (${formatDuration(record.ms)})`);
    this.details(record);
  }

  /** Counts the outcomes into the run's tally, and returns their own. */
  private count(outcomes: readonly Outcome[]): Tally {
    const counts = emptyTally();
    for (const outcome of outcomes) {
      counts[outcome.kind] += 1;
      this.tally[outcome.kind] += 1;
      if (outcome.kind === "failed" && outcome.setup && this.setupProblem === undefined) this.setupProblem = outcome.reason;
    }
    return counts;
  }

  private mark(outcome: Outcome): string {
    return outcomeMark(this.output.color, outcome);
  }

  private details(record: InvocationDetails): void {
    for (const text of detailLines(record)) this.output.line(`    ${text}`);
  }
}

function describeInput(input: InputMessage): Record<string, unknown> {
  const message = input.message as unknown as Record<string, unknown> | undefined;
  return { where: input.where, type: message?.["type"] ?? null, userId: message?.["userId"] ?? null };
}

function labelOf(input: InputMessage): string {
  const { type, userId } = describeInput(input);
  return `${input.where} ${String(type)}${typeof userId === "string" ? ` ${printable(userId)}` : ""}`;
}
