import type { Outcome, ThrownInfo } from "./types.js";

/**
 * The service's rules for how a function invocation ends (docs/functions.md#errors), pure: a
 * return delivers; no handler or `EventNotSupported` skips (discarded, no failure);
 * `InvalidEventPayload` and `ValidationError` are "Message Rejected", any other throw "Bad
 * Request" (both discarded, never retried); `RetryError` and the time limit are retried.
 */

/** Which of the runtime's classes a thrown value is an instance of (`setup`: a package to install). */
export type ThrownClass = "EventNotSupported" | "InvalidEventPayload" | "ValidationError" | "RetryError" | "setup" | "other";

/** How the handler's promise settled, or why there was none to call. */
export type Settled =
  | { kind: "returned"; value: unknown }
  | { kind: "threw"; thrown: ThrownInfo; thrownClass: ThrownClass }
  | { kind: "timeout"; limitMs: number }
  | { kind: "missing"; reason: string };

export function outcomeOf(settled: Settled): Outcome {
  switch (settled.kind) {
    case "returned":
      return { kind: "delivered" };
    case "missing":
      return { kind: "skipped", errorType: "Unsupported Event Type", reason: settled.reason };
    case "timeout":
      return { kind: "retry", errorType: "Timeout", reason: `did not finish within ${settled.limitMs / 1000} s (the service's limit)` };
    case "threw":
      return thrownOutcome(settled.thrown, settled.thrownClass);
  }
}

function thrownOutcome(thrown: ThrownInfo, thrownClass: ThrownClass): Outcome {
  const reason = thrown.isError ? `${thrown.name}: ${thrown.message}` : `threw a ${thrown.name}, not an Error: ${thrown.message}`;
  switch (thrownClass) {
    case "EventNotSupported":
      return { kind: "skipped", errorType: "Unsupported Event Type", reason };
    case "InvalidEventPayload":
    case "ValidationError":
      return { kind: "failed", errorType: "Message Rejected", reason };
    case "RetryError":
      return { kind: "retry", errorType: "Retry", reason };
    case "setup":
      return { kind: "failed", errorType: "Bad Request", reason: thrown.message, setup: true };
    case "other":
      return { kind: "failed", errorType: "Bad Request", reason };
  }
}

/** One element of an `onBatch` answer array: `{status: 500, errormessage: "…"}`. */
interface EventAnswer {
  status: number;
  errormessage?: unknown;
}

/**
 * Each event's outcome of an `onBatch` invocation: from the per-event answer array it returned
 * (one `{status}` per event, in order), else the batch's own outcome for every event.
 */
export function batchOutcomes(settled: Settled, count: number): Outcome[] {
  if (settled.kind === "returned" && isAnswerArray(settled.value, count)) return settled.value.map(answerOutcome);
  const outcome = outcomeOf(settled);
  return Array.from({ length: count }, () => outcome);
}

/** An array with one `{status}` object (an HTTP status) per event: a partial-failure answer. */
function isAnswerArray(value: unknown, count: number): value is EventAnswer[] {
  return (
    Array.isArray(value) &&
    value.length === count &&
    value.every((answer) => typeof answer === "object" && answer !== null && Number.isInteger(answer.status) && answer.status >= 100 && answer.status <= 599)
  );
}

/** 2xx delivers; 429 and 5xx are temporary (retried, as the docs' examples retry them); any other status is permanent. */
export function answerOutcome(answer: EventAnswer): Outcome {
  const { status } = answer;
  if (status >= 200 && status < 300) return { kind: "delivered" };
  const message = typeof answer.errormessage === "string" && answer.errormessage !== "" ? `: ${answer.errormessage}` : "";
  const reason = `status ${status}${message}`;
  if (status === 429 || status >= 500) return { kind: "retry", errorType: "Retry", reason };
  return { kind: "failed", errorType: "Bad Request", reason };
}

/** The largest message the Tracking API takes; a source function's bigger message fails the invocation. */
const MAX_EMITTED_MESSAGE_BYTES = 32_768;

/**
 * A source invocation's outcome: as any other, but a message over the Tracking API's 32 KB
 * fails it (the docs' "message is too large" error type), named by its position.
 */
export function sourceOutcome(settled: Settled, messageSizes: readonly number[]): Outcome {
  const outcome = outcomeOf(settled);
  if (outcome.kind !== "delivered") return outcome;
  const index = messageSizes.findIndex((size) => size > MAX_EMITTED_MESSAGE_BYTES);
  if (index === -1) return outcome;
  return {
    kind: "failed",
    errorType: "Message Too Large",
    reason: `message ${index + 1} is ${messageSizes[index]} bytes, over the Tracking API's ${MAX_EMITTED_MESSAGE_BYTES}-byte limit`,
  };
}
