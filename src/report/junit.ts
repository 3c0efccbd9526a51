import { redactText } from "../util/redact.js";

/** A JUnit XML report: one suite of test cases (listen: one per request; replay: one per message). */

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
  systemOut?: string;
}

export interface JunitSuite {
  name: string;
  cases: readonly JunitCase[];
  timestamp?: Date;
  /** Seconds; defaults to the sum of the cases' times. */
  time?: number;
  /** Masked wherever it appears (4+ characters, as everywhere else). */
  secret?: string | undefined;
}

export function junitXml(suite: JunitSuite): string {
  const { text, attr } = escapers(suite.secret);
  const failures = suite.cases.filter((c) => c.failure !== undefined).length;
  const time = seconds(suite.time ?? suite.cases.reduce((sum, c) => sum + c.time, 0));
  const counts = `tests="${suite.cases.length}" failures="${failures}" errors="0" skipped="0" time="${time}"`;
  const stamp = suite.timestamp ? ` timestamp="${suite.timestamp.toISOString().replace(/\.\d{3}Z$/, "")}"` : "";
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${attr(suite.name)}" ${counts}>`,
    `  <testsuite name="${attr(suite.name)}" ${counts}${stamp}>`,
  ];
  for (const test of suite.cases) {
    const open = `    <testcase name="${attr(test.name)}" classname="${attr(test.classname)}" time="${seconds(test.time)}"`;
    if (!test.failure && test.systemOut === undefined) {
      lines.push(`${open}/>`);
      continue;
    }
    lines.push(`${open}>`);
    if (test.failure) {
      const type = test.failure.type !== undefined ? ` type="${attr(test.failure.type)}"` : "";
      lines.push(`      <failure message="${attr(test.failure.message)}"${type}>${text(test.failure.details ?? test.failure.message)}</failure>`);
    }
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
function escapers(secret: string | undefined): { text: (value: string) => string; attr: (value: string) => string } {
  const text = (value: string): string =>
    redactText(value, secret).replace(INVALID_XML, "\ufffd").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const attr = (value: string): string => text(value).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
  return { text, attr };
}
