import type { JunitCase, JunitFailure } from "../report/junit.js";
import type { MessageComparison } from "./message-comparison.js";
import { formatComparison } from "./run-comparison.js";

/**
 * JUnit test cases for `--compare` and `--expect-status` (written with
 * report/junit.ts beside replay's one case per message).
 */
const COMPARE_CLASSNAME = "webhook-cli.replay.compare";

/** One failing case per changed message: the first difference as the message, all of them as details. */
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

/** The failure for a message whose answers are outside --expect-status, to put on its replay case. */
function expectStatusFailure(problems: readonly string[]): JunitFailure | undefined {
  if (problems.length === 0) return undefined;
  return { message: problems.join("; "), type: "expect-status" };
}

/**
 * A replay case with an --expect-status failure added; a delivery failure
 * already on it is kept first (JUnit carries one failure per case).
 */
export function withExpectStatus(test: JunitCase, problems: readonly string[]): JunitCase {
  const failure = expectStatusFailure(problems);
  if (failure === undefined) return test;
  if (test.failure === undefined) return { ...test, failure };
  return { ...test, failure: { ...test.failure, details: `${test.failure.details ?? test.failure.message}\n${failure.message}` } };
}
