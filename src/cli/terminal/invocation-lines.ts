import { inspect } from "node:util";
import type { ChalkInstance } from "chalk";
import type { ConsoleEntry, FetchRecord, InvocationRecord, Outcome } from "../../functions/types.js";
import { printable, printableLines } from "../../safe-text/printable.js";
import { formatDuration } from "../../util/duration.js";

/**
 * What a terminal shows of one function invocation (docs/commands/function.md#output), for
 * `function run` and for every command that delivers through a destination function: its return
 * or error, console output, the requests it made (method, URL, status, time) and its `Segment`
 * calls, one indented line each; and the JSON form of a record for `--json`.
 */

/** What a human line shows of a return value or a message; --json has it whole up to MAX_JSON_CHARS. */
const MAX_SHOWN_CHARS = 2000;
const MAX_JSON_CHARS = 64 * 1024;

/** The parts of an invocation its lines show (a load's too, which has no return). */
export type InvocationDetails = Pick<InvocationRecord, "logs" | "logsDropped" | "fetches" | "fetchesDropped" | "messages" | "objects"> &
  Partial<InvocationRecord>;

/** The lines under an invocation's own line, unindented. */
export function detailLines(record: InvocationDetails): string[] {
  const lines: string[] = [];
  if (record.returned !== undefined) lines.push(`returned: ${clip(shown(record.returned))}`);
  if (record.thrown?.location !== undefined) lines.push(`at ${record.thrown.location}`);
  for (const entry of record.logs) lines.push(consoleLine(entry));
  if (record.logsDropped > 0) lines.push(`(${record.logsDropped} more console lines past 64 KiB not kept)`);
  for (const fetch of record.fetches) lines.push(fetchLine(fetch));
  if (record.fetchesDropped > 0) lines.push(`(${record.fetchesDropped} more requests not listed)`);
  for (const message of record.messages) lines.push(`Segment.${message.type}: ${clip(JSON.stringify(message))}`);
  for (const object of record.objects) lines.push(`Segment.set: ${clip(JSON.stringify(object))}`);
  return lines;
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

/** An invocation's mark: `✓` delivered, `-` skipped, `✗` failed (not retried), `!` to be retried. */
export function outcomeMark(color: ChalkInstance, outcome: Outcome): string {
  return { delivered: color.green("✓"), skipped: color.dim("-"), failed: color.red("✗"), retry: color.yellow("!") }[outcome.kind];
}

function consoleLine(entry: ConsoleEntry): string {
  const [first = "", ...rest] = printableLines(entry.text).split("\n");
  return [`console.${entry.level}: ${first}`, ...rest.map((text) => `  ${text}`)].join("\n    ");
}

/** `fetch POST https://… → 200 (41ms, sent to …)`: one request a function made. */
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
export function invocationJson(record: InvocationRecord): Record<string, unknown> {
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

/** A delivery's URL for a `--json` event: a function's invocation as its JSON record. */
export function urlJson<U extends { invocation?: InvocationRecord | undefined }>(
  url: U,
): U | (Omit<U, "invocation"> & { invocation: Record<string, unknown> }) {
  return url.invocation === undefined ? url : { ...url, invocation: invocationJson(url.invocation) };
}

/** What a destination function made of its last attempt, after the arrow of a result line: `onTrack delivered`, `onPage skipped: …`. */
export function functionVerdict(
  url: { status: number | null; error: string | null; skipped?: string | undefined; invocation?: InvocationRecord | undefined },
  interrupted: boolean,
): string {
  const handler = url.invocation?.handler ?? "(no handler)";
  if (interrupted) return `${handler} interrupted`;
  // No handler: the reason names the one missing.
  if (url.skipped !== undefined) return `${url.invocation?.handler ? `${handler} ` : ""}skipped: ${printable(url.skipped)}`;
  if (url.status !== null && url.status >= 200 && url.status < 300) return `${handler} delivered`;
  return `${handler} failed: ${printable(url.error ?? "")}`;
}
