import { inspect } from "node:util";
import type { InvocationState } from "../../../functions/invocation.js";
import type { BatchRecord, ConsoleEntry, FetchRecord, InvocationRecord, Outcome } from "../../../functions/types.js";
import type { InputMessage } from "../../../messages/input.js";
import { formatDuration } from "../../../util/duration.js";
import { printable, printableLines } from "../../../safe-text/printable.js";
import type { Output } from "../../terminal/output.js";

/** What a human line shows of a return value or a message; --json has it whole up to MAX_JSON_CHARS. */
const MAX_SHOWN_CHARS = 2000;
const MAX_JSON_CHARS = 64 * 1024;

export interface Tally {
  delivered: number;
  skipped: number;
  failed: number;
  retry: number;
}

/**
 * Prints what each invocation did (docs/commands/function.md#output): a line with the handler,
 * the input and the outcome, then its return or error, console output, fetches and `Segment`
 * calls; under --json one `invocation` object each. Counts outcomes per event for the summary.
 */
export class InvocationReport {
  readonly tally: Tally = { delivered: 0, skipped: 0, failed: 0, retry: 0 };
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
    this.count(record.outcome);
    this.output.event("invocation", { input: describeInput(input), ...jsonOf(record) });
    this.output.line(
      `${this.mark(record.outcome)} ${record.handler ?? "(no handler)"}: ${labelOf(input)} → ${verdict(record.outcome, "delivered")} (${formatDuration(record.ms)})`,
    );
    this.details(record);
  }

  batch(inputs: readonly InputMessage[], record: BatchRecord): void {
    for (const outcome of record.events) this.count(outcome);
    this.output.event("invocation", {
      input: { events: inputs.map(describeInput) },
      ...jsonOf(record),
      events: record.events.map((outcome, i) => ({ ...describeInput(inputs[i] as InputMessage), outcome })),
    });
    const counts = countsOf(record.events);
    const range = inputs.length > 1 ? `${inputs[0]?.where} … ${inputs.at(-1)?.where}` : (inputs[0]?.where ?? "");
    this.output.line(`${this.mark(record.outcome)} onBatch: ${inputs.length} events (${range}) → ${counts} (${formatDuration(record.ms)})`);
    this.details(record);
    record.events.forEach((outcome, i) => {
      if (outcome.kind !== "delivered") this.output.line(`    ${labelOf(inputs[i] as InputMessage)} → ${verdict(outcome, "delivered")}`);
    });
  }

  request(url: string, record: InvocationRecord): void {
    this.count(record.outcome);
    this.output.event("invocation", { input: { request: { method: "POST", url } }, ...jsonOf(record) });
    this.output.line(`${this.mark(record.outcome)} onRequest: POST ${printable(url)} → ${verdict(record.outcome, "accepted")} (${formatDuration(record.ms)})`);
    this.details(record);
  }

  private count(outcome: Outcome): void {
    this.tally[outcome.kind] += 1;
    if (outcome.kind === "failed" && outcome.setup && this.setupProblem === undefined) this.setupProblem = outcome.reason;
  }

  private mark(outcome: Outcome): string {
    const c = this.output.color;
    return { delivered: c.green("✓"), skipped: c.dim("-"), failed: c.red("✗"), retry: c.yellow("!") }[outcome.kind];
  }

  private details(
    record: Pick<InvocationRecord, "logs" | "logsDropped" | "fetches" | "fetchesDropped" | "messages" | "objects"> & Partial<InvocationRecord>,
  ): void {
    const line = (text: string) => this.output.line(`    ${text}`);
    if (record.returned !== undefined) line(`returned: ${clip(shown(record.returned))}`);
    if (record.thrown?.location !== undefined) line(`at ${record.thrown.location}`);
    for (const entry of record.logs) line(consoleLine(entry));
    if (record.logsDropped > 0) line(`(${record.logsDropped} more console lines past 64 KiB not kept)`);
    for (const fetch of record.fetches) line(fetchLine(fetch));
    if (record.fetchesDropped > 0) line(`(${record.fetchesDropped} more requests not listed)`);
    for (const message of record.messages) line(`Segment.${message.type}: ${clip(JSON.stringify(message))}`);
    for (const object of record.objects) line(`Segment.set: ${clip(JSON.stringify(object))}`);
  }
}

/** `delivered` (or the source's `accepted`), `skipped (…)`, `failed, not retried (…)`, `to be retried (…)`. */
export function verdict(outcome: Outcome, success: string): string {
  switch (outcome.kind) {
    case "delivered":
      return success;
    case "skipped":
      return `skipped (${outcome.errorType}): ${printable(outcome.reason)}`;
    case "failed":
      return `failed, not retried (${outcome.errorType}): ${printable(outcome.reason)}`;
    case "retry":
      return `to be retried (${outcome.errorType}): ${printable(outcome.reason)}`;
  }
}

function countsOf(outcomes: readonly Outcome[]): string {
  const tally: Tally = { delivered: 0, skipped: 0, failed: 0, retry: 0 };
  for (const outcome of outcomes) tally[outcome.kind] += 1;
  return `${tally.delivered} delivered, ${tally.skipped} skipped, ${tally.failed} failed, ${tally.retry} to be retried`;
}

function describeInput(input: InputMessage): Record<string, unknown> {
  const message = input.message as unknown as Record<string, unknown> | undefined;
  return { where: input.where, type: message?.["type"] ?? null, userId: message?.["userId"] ?? null };
}

function labelOf(input: InputMessage): string {
  const { type, userId } = describeInput(input);
  return `${input.where} ${String(type)}${typeof userId === "string" ? ` ${printable(userId)}` : ""}`;
}

function consoleLine(entry: ConsoleEntry): string {
  const [first = "", ...rest] = printableLines(entry.text).split("\n");
  return [`console.${entry.level}: ${first}`, ...rest.map((text) => `  ${text}`)].join("\n    ");
}

function fetchLine(fetch: FetchRecord): string {
  const answer = fetch.status !== null ? String(fetch.status) : `no answer: ${printable(fetch.error ?? "")}`;
  const via = fetch.sentTo !== undefined ? `, sent to ${fetch.sentTo}` : "";
  return `fetch ${fetch.method} ${printable(fetch.url)} → ${answer} (${formatDuration(fetch.ms)}${via})`;
}

/** A value as the function returned it: JSON where it can be, else as Node inspects it. */
function shown(value: unknown): string {
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return printable(json);
  } catch {
    // A cycle or a BigInt: inspected below.
  }
  return printable(inspect(value, { depth: 4, breakLength: Number.POSITIVE_INFINITY }));
}

function clip(text: string): string {
  return text.length <= MAX_SHOWN_CHARS ? text : `${text.slice(0, MAX_SHOWN_CHARS)}… (${text.length} characters)`;
}

/** The record for --json: the return value only when it is JSON (else inspected as text), clipped. */
function jsonOf(record: InvocationRecord): Record<string, unknown> {
  const { returned, ...rest } = record;
  if (returned === undefined) return rest;
  let json: string | undefined;
  try {
    json = JSON.stringify(returned);
  } catch {
    json = undefined;
  }
  if (json === undefined) return { ...rest, returned: null, returnedText: inspect(returned, { depth: 4 }).slice(0, MAX_JSON_CHARS) };
  if (json.length > MAX_JSON_CHARS) return { ...rest, returned: null, returnedText: `${json.slice(0, MAX_JSON_CHARS)}…` };
  return { ...rest, returned: JSON.parse(json) };
}
