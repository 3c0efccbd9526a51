import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { DeliveryResult } from "../delivery/types.js";
import { UsageError } from "../errors.js";
import type { ReceivedRequest } from "../receiver/received-request.js";
import { formatComparison, type MessageComparison } from "../regress/message-comparison.js";
import { redactText, type Secrets } from "../safe-text/redact.js";
import { bodyLabel } from "../receiver/body-label.js";

/**
 * The one JUnit module (`--junit FILE` of send, replay and listen): the XML of
 * one suite, writing it, and the test cases each command reports: one per
 * message delivered, per request received, per changed answer.
 */

export interface JunitFailure {
  message: string;
  /** A short category, e.g. `signature` or `delivery`. */
  type?: string;
  /** Longer text shown by CI tools under the failure. */
  details?: string;
}

export interface JunitCase {
  name: string;
  classname: string;
  /** Seconds. */
  time: number;
  failure?: JunitFailure;
  /** Why the case was skipped (a destination function declined the event): no failure, marked `<skipped>`. */
  skipped?: string;
  systemOut?: string;
}

export interface JunitSuite {
  name: string;
  cases: readonly JunitCase[];
  timestamp?: Date;
  /** Seconds; defaults to the sum of the cases' times. */
  time?: number;
  /** Masked wherever it appears (4+ characters, as everywhere else). */
  secret?: Secrets;
}

/** The report as XML: `<testsuites>` holding one `<testsuite>`. */
export function junitXml(suite: JunitSuite): string {
  const { text, attr } = escapers(suite.secret);
  const failures = suite.cases.filter((c) => c.failure !== undefined).length;
  const skipped = suite.cases.filter((c) => c.failure === undefined && c.skipped !== undefined).length;
  const time = seconds(suite.time ?? suite.cases.reduce((sum, c) => sum + c.time, 0));
  const counts = `tests="${suite.cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}"`;
  const stamp = suite.timestamp ? ` timestamp="${suite.timestamp.toISOString().replace(/\.\d{3}Z$/, "")}"` : "";
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${attr(suite.name)}" ${counts}>`,
    `  <testsuite name="${attr(suite.name)}" ${counts}${stamp}>`,
  ];
  for (const test of suite.cases) {
    const open = `    <testcase name="${attr(test.name)}" classname="${attr(test.classname)}" time="${seconds(test.time)}"`;
    if (!test.failure && test.skipped === undefined && test.systemOut === undefined) {
      lines.push(`${open}/>`);
      continue;
    }
    lines.push(`${open}>`);
    if (test.failure) {
      const type = test.failure.type !== undefined ? ` type="${attr(test.failure.type)}"` : "";
      lines.push(`      <failure message="${attr(test.failure.message)}"${type}>${text(test.failure.details ?? test.failure.message)}</failure>`);
    } else if (test.skipped !== undefined) lines.push(`      <skipped message="${attr(test.skipped)}"/>`);
    if (test.systemOut !== undefined) lines.push(`      <system-out>${text(test.systemOut)}</system-out>`);
    lines.push(`    </testcase>`);
  }
  lines.push(`  </testsuite>`, `</testsuites>`, "");
  return lines.join("\n");
}

function seconds(value: number): string {
  return (Math.max(0, value) || 0).toFixed(3);
}

// XML 1.0 cannot carry most control characters, even escaped.
const INVALID_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

/** Escaped for XML, with credentials and the secret masked (a report is a file that gets shared). */
function escapers(secret: Secrets): { text: (value: string) => string; attr: (value: string) => string } {
  const text = (value: string): string =>
    redactText(value, secret).replace(INVALID_XML, "\ufffd").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const attr = (value: string): string => text(value).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
  return { text, attr };
}

/** Writes the report to `file` (relative to `cwd`); one that cannot be written is a usage error naming the `junit` field and the file. */
export function writeJunitFile(cwd: string, file: string, suite: JunitSuite): void {
  try {
    writeFileSync(resolve(cwd, file), junitXml(suite));
  } catch (error) {
    throw new UsageError(`cannot write: ${(error as Error).message}`, { field: "junit", file });
  }
}

/** One message's case (send, replay): failing unless delivered or skipped by a function (then `<skipped>`); `undefined` = never started. */
export function deliveryCase(name: string, classname: string, result: DeliveryResult | undefined, ms: number): JunitCase {
  const base = { name, classname, time: ms / 1000 };
  if (result?.delivered) return base;
  if (result?.skipped) return { ...base, skipped: result.urls.map((u) => `${u.url}: ${u.skipped ?? "skipped"}`).join("; ") };
  const message =
    result === undefined || result.interrupted ? "interrupted" : result.urls.map((u) => `${u.url}: ${u.error ?? `status ${u.status ?? "none"}`}`).join("; ");
  return { ...base, failure: { message, type: "delivery" } };
}

const LISTEN_CLASSNAME = "webhook-cli.listen";

/** One received request's case (listen): failing when its signature or shape is invalid, one reason per problem. */
export function requestCase(request: ReceivedRequest): JunitCase {
  const reasons = invalidReasons(request);
  const test: JunitCase = {
    name: `#${request.index} ${bodyLabel(request.verdict) ?? "unknown"} ${request.method} ${request.path}`,
    classname: LISTEN_CLASSNAME,
    time: 0,
  };
  if (reasons.length > 0) {
    test.failure = {
      message: reasons[0] ?? "invalid",
      type: request.verdict.signatureValid === false ? "signature" : "shape",
      details: reasons.join("\n"),
    };
  }
  return test;
}

/** Why a request counts as invalid, one reason per problem. */
function invalidReasons(request: ReceivedRequest): string[] {
  const v = request.verdict;
  const reasons: string[] = [];
  if (v.signatureValid === false) reasons.push(`signature: ${v.signatureError ?? "invalid"}${v.diagnosis ? ` (likely cause: ${v.diagnosis.message})` : ""}`);
  for (const error of v.shapeErrors) reasons.push(`shape: ${error.message}`);
  return reasons;
}

/** listen's failing case when --exit-after came before --count requests (every reason for a non-zero exit is a failing case). */
export function countNotReachedCase(count: number, exitAfterMs: number, message: string): JunitCase {
  return { name: `--count ${count} requests`, classname: LISTEN_CLASSNAME, time: exitAfterMs / 1000, failure: { message, type: "count" } };
}

const COMPARE_CLASSNAME = "webhook-cli.replay.compare";

/** One case per compared message (replay --compare): a changed one fails with its first difference as the message, all of them as details. */
export function comparisonCase(result: MessageComparison): JunitCase {
  const name = `line ${result.line}: ${result.label}`;
  if (result.status !== "changed") return { name, classname: COMPARE_CLASSNAME, time: 0 };
  return {
    name,
    classname: COMPARE_CLASSNAME,
    time: 0,
    failure: { message: result.changes[0] ?? "changed", type: "compare", details: formatComparison(result).join("\n") },
  };
}

/**
 * A replay case with an --expect-status failure added; a delivery failure
 * already on it is kept first (JUnit carries one failure per case).
 */
export function withExpectStatus(test: JunitCase, problems: readonly string[]): JunitCase {
  if (problems.length === 0) return test;
  const failure: JunitFailure = { message: problems.join("; "), type: "expect-status" };
  if (test.failure === undefined) return { ...test, failure };
  return { ...test, failure: { ...test.failure, details: `${test.failure.details ?? test.failure.message}\n${failure.message}` } };
}
