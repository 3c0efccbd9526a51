import { describe, expect, it } from "vitest";
import { answerOutcome, batchOutcomes, outcomeOf, sourceOutcome, type Settled } from "../../src/functions/outcome.js";

// The service's table (docs/functions.md#errors): what a return, a throw and the limit become.
const threw = (name: string, thrownClass: Extract<Settled, { kind: "threw" }>["thrownClass"], isError = true): Settled => ({
  kind: "threw",
  thrown: { name, message: "why", isError },
  thrownClass,
});

describe("an invocation's outcome", () => {
  it("maps each way of ending as the service does", () => {
    expect(outcomeOf({ kind: "returned", value: undefined })).toEqual({ kind: "delivered" });
    expect(outcomeOf({ kind: "missing", reason: "no onAlias handler" })).toEqual({
      kind: "skipped",
      errorType: "Unsupported Event Type",
      reason: "no onAlias handler",
    });
    expect(outcomeOf(threw("EventNotSupported", "EventNotSupported"))).toEqual({
      kind: "skipped",
      errorType: "Unsupported Event Type",
      reason: "EventNotSupported: why",
    });
    expect(outcomeOf(threw("InvalidEventPayload", "InvalidEventPayload"))).toMatchObject({ kind: "failed", errorType: "Message Rejected" });
    expect(outcomeOf(threw("ValidationError", "ValidationError"))).toMatchObject({ kind: "failed", errorType: "Message Rejected" });
    expect(outcomeOf(threw("TypeError", "other"))).toEqual({ kind: "failed", errorType: "Bad Request", reason: "TypeError: why" });
    expect(outcomeOf(threw("RetryError", "RetryError"))).toEqual({ kind: "retry", errorType: "Retry", reason: "RetryError: why" });
    expect(outcomeOf({ kind: "timeout", limitMs: 5000 })).toEqual({
      kind: "retry",
      errorType: "Timeout",
      reason: "did not finish within 5 s (the service's limit)",
    });
  });

  it("a thrown non-Error is a Bad Request that says what was thrown", () => {
    expect(outcomeOf(threw("string", "other", false))).toEqual({ kind: "failed", errorType: "Bad Request", reason: "threw a string, not an Error: why" });
  });

  it("a package that is not installed fails as a setup problem, with the message that names it", () => {
    expect(outcomeOf(threw("ConfigError", "setup"))).toEqual({ kind: "failed", errorType: "Bad Request", reason: "why", setup: true });
  });
});

describe("onBatch outcomes", () => {
  it("a per-event answer array gives each event its own outcome: 2xx delivered, 429 and 5xx retried, the rest failed", () => {
    const answers = [{ status: 200 }, { status: 400, errormessage: "Bad Request" }, { status: 500, errormessage: "down" }, { status: 429 }, { status: 201 }];
    expect(batchOutcomes({ kind: "returned", value: answers }, 5)).toEqual([
      { kind: "delivered" },
      { kind: "failed", errorType: "Bad Request", reason: "status 400: Bad Request" },
      { kind: "retry", errorType: "Retry", reason: "status 500: down" },
      { kind: "retry", errorType: "Retry", reason: "status 429" },
      { kind: "delivered" },
    ]);
  });

  it("a return that is not one answer per event delivers them all; a throw or the limit applies to every event", () => {
    expect(batchOutcomes({ kind: "returned", value: [{ status: 500 }] }, 2)).toEqual([{ kind: "delivered" }, { kind: "delivered" }]);
    expect(batchOutcomes({ kind: "returned", value: [{ status: "500" }, { status: 200 }] }, 2)).toEqual([{ kind: "delivered" }, { kind: "delivered" }]);
    expect(batchOutcomes({ kind: "timeout", limitMs: 5000 }, 2).map((o) => o.kind)).toEqual(["retry", "retry"]);
    expect(batchOutcomes(threw("ValidationError", "ValidationError"), 3).map((o) => o.kind)).toEqual(["failed", "failed", "failed"]);
  });

  it("an answer's status alone decides", () => {
    expect(answerOutcome({ status: 404 })).toEqual({ kind: "failed", errorType: "Bad Request", reason: "status 404" });
    expect(answerOutcome({ status: 503, errormessage: "" })).toEqual({ kind: "retry", errorType: "Retry", reason: "status 503" });
  });
});

describe("a source invocation's outcome", () => {
  it("fails when a message it emitted is over the Tracking API's 32 KB", () => {
    expect(sourceOutcome({ kind: "returned", value: undefined }, [100, 32_768])).toEqual({ kind: "delivered" });
    expect(sourceOutcome({ kind: "returned", value: undefined }, [100, 32_769])).toEqual({
      kind: "failed",
      errorType: "Message Too Large",
      reason: "message 2 is 32769 bytes, over the Tracking API's 32768-byte limit",
    });
    expect(sourceOutcome(threw("RetryError", "RetryError"), [40_000]).kind).toBe("retry");
  });
});
