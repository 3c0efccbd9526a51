import { createHash } from "node:crypto";
import { ABSENT, diffJson, type JsonDifference, type Side } from "./json-diff.js";
import { formatPath, type JsonPath } from "./jsonpath.js";
import type { Answer, AnswerBody, AnswerUrl } from "./results-read.js";

/**
 * `replay --compare OLD`: each message's answers against the old answers for
 * the same input line. Statuses are compared exactly; bodies structurally when
 * both parse as JSON (whatever the content-type says), else as text, or by
 * SHA-256 when one side kept only a digest. URLs are matched by position, not
 * by address, since the two runs usually target different builds.
 */

export interface CompareOptions {
  /** Body paths left out of the comparison (`--ignore`). */
  ignore?: readonly JsonPath[] | undefined;
  /** Body differences listed per message; the rest are counted. */
  limit?: number | undefined;
}

export interface MessageComparison {
  line: number;
  /** `track Order Completed, user-42`. */
  label: string;
  status: "same" | "changed" | "new";
  /** One short text per difference: `status 200 → 500`, `body $.total: 10 → 12`. */
  changes: string[];
}

export interface CompareSummary {
  same: number;
  changed: number;
  new: number;
  missing: number;
}

/** The differences between two answers for one message; empty when they agree. */
export function compareAnswers(before: Answer, after: Answer, options: CompareOptions = {}): string[] {
  const changes: string[] = [];
  const count = Math.max(before.urls.length, after.urls.length);
  if (before.urls.length !== after.urls.length) changes.push(`answers: ${before.urls.length} URL(s) → ${after.urls.length}`);
  for (let i = 0; i < Math.min(before.urls.length, after.urls.length); i++) {
    const prefix = count > 1 ? `url ${i + 1}: ` : "";
    for (const change of compareUrl(before.urls[i] as AnswerUrl, after.urls[i] as AnswerUrl, options)) changes.push(prefix + change);
  }
  return changes;
}

function compareUrl(before: AnswerUrl, after: AnswerUrl, options: CompareOptions): string[] {
  // A destination function that skipped the event on one side only (docs/functions.md#regression-testing).
  if ((before.skipped === undefined) !== (after.skipped === undefined)) return [`${outcomeText(before)} → ${outcomeText(after)}`];
  // A new status usually comes with another body; listing its every field would bury the status.
  if (before.status !== after.status) return [`status ${statusText(before)} → ${statusText(after)}`];
  const changes: string[] = compareRequests(before.requests, after.requests);
  if (before.status === null) return changes;
  if (normalType(before.contentType) !== normalType(after.contentType)) {
    changes.push(`content-type ${before.contentType ?? "(none)"} → ${after.contentType ?? "(none)"}`);
  }
  changes.push(...compareBodies(before.body, after.body, options));
  return changes;
}

type Comparable = { kind: "json"; value: unknown } | { kind: "text"; text: string } | { kind: "hash"; sha256: string; size: number } | { kind: "none" };

function compareBodies(before: AnswerBody, after: AnswerBody, options: CompareOptions): string[] {
  const a = comparable(before);
  const b = comparable(after);
  if (a.kind === "json" && b.kind === "json") {
    const diff = diffJson(a.value, b.value, { ignore: options.ignore, limit: options.limit ?? 10 });
    const lines = diff.differences.map(bodyDifference);
    if (diff.total > diff.differences.length) lines.push(`body: … and ${diff.total - diff.differences.length} more differences`);
    return lines;
  }
  if (a.kind === "hash" || b.kind === "hash") {
    const sa = digest(a);
    const sb = digest(b);
    return sa !== undefined && sa === sb ? [] : [`body: ${describeBody(a)} → ${describeBody(b)}`];
  }
  if (a.kind === "text" && b.kind === "text" && a.text === b.text) return [];
  if (a.kind === "none" && b.kind === "none") return [];
  return [`body: ${describeBody(a)} → ${describeBody(b)}`];
}

function comparable(body: AnswerBody): Comparable {
  if (body.kind !== "text") return body.kind === "value" ? { kind: "json", value: body.value } : body;
  try {
    // JSON.parse is iterative in V8, so deep nesting is safe here (JSON.stringify is not).
    return { kind: "json", value: JSON.parse(body.text) };
  } catch {
    return body;
  }
}

function digest(body: Comparable): string | undefined {
  if (body.kind === "hash") return body.sha256;
  if (body.kind === "text") return createHash("sha256").update(body.text, "utf8").digest("hex");
  if (body.kind === "none") return createHash("sha256").digest("hex");
  try {
    return createHash("sha256").update(JSON.stringify(body.value), "utf8").digest("hex");
  } catch {
    return undefined; // too deep to serialize: counted as changed
  }
}

function describeBody(body: Comparable): string {
  switch (body.kind) {
    case "hash":
      return `sha256 ${body.sha256.slice(0, 12)}… (${body.size} bytes)`;
    case "text":
      return body.text === "" ? "(empty)" : `text ${quote(body.text)}`;
    case "none":
      return "(none)";
    default:
      return `JSON ${describeValue(body.value)}`;
  }
}

function bodyDifference(difference: JsonDifference): string {
  return `body ${shortPath(difference.path)}: ${describeValue(difference.before)} → ${describeValue(difference.after)}`;
}

/** A value in one short word or quote; containers by size only (never serialized: they may be deep). */
function describeValue(value: Side): string {
  if (value === ABSENT) return "(absent)";
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? "" : "s"}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).length;
    return `{${keys} key${keys === 1 ? "" : "s"}}`;
  }
  return typeof value === "string" ? quote(value) : String(value);
}

const SHOWN_STEPS = 12;

/** The path, with the middle of a very deep one elided. */
function shortPath(steps: (string | number)[]): string {
  if (steps.length <= SHOWN_STEPS * 2) return formatPath(steps);
  const head = formatPath(steps.slice(0, SHOWN_STEPS));
  const tail = formatPath(steps.slice(-SHOWN_STEPS)).slice(1);
  return `${head}…(${steps.length - SHOWN_STEPS * 2} levels)…${tail}`;
}

function quote(text: string): string {
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return JSON.stringify(shown);
}

/** A function's requests, compared in order by method, URL and status: the first one that differs. */
function compareRequests(before: readonly string[] | undefined, after: readonly string[] | undefined): string[] {
  if (before === undefined || after === undefined) return [];
  const count = Math.max(before.length, after.length);
  for (let i = 0; i < count; i++) {
    if (before[i] === after[i]) continue;
    const more = before.length !== after.length ? ` (${before.length} requests → ${after.length})` : "";
    return [`request ${i + 1}: ${before[i] ?? "(none)"} → ${after[i] ?? "(none)"}${more}`];
  }
  return [];
}

function outcomeText(url: AnswerUrl): string {
  return url.skipped !== undefined ? `skipped (${url.skipped})` : `status ${statusText(url)}`;
}

function statusText(url: AnswerUrl): string {
  if (url.status !== null) return String(url.status);
  return url.error !== null ? `no answer (${url.error})` : "no answer";
}

function normalType(contentType: string | null): string | null {
  return contentType === null ? null : contentType.toLowerCase().replace(/\s+/g, "");
}

/** One output line per difference: `line 12 (track Order Completed, user-42): status 200 → 500`. */
export function formatComparison(result: MessageComparison): string[] {
  return result.changes.map((change) => `line ${result.line} (${result.label}): ${change}`);
}

/** `track Order Completed, user-42` from the answer's facts. */
export function labelOf(answer: Answer): string {
  const { facts } = answer;
  const what = facts.event !== undefined ? `${facts.type} ${facts.event}` : facts.type;
  return facts.userId !== undefined ? `${what}, ${facts.userId}` : what;
}
