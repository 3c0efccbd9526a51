import type { FunctionSettings } from "../functions/settings.js";
import type { BatchRecord, InvocationRecord, Outcome } from "../functions/types.js";
import { onAbort } from "../util/abort-listeners.js";
import { keepBody, type CapturedResponse } from "./captured-body.js";
import type { AttemptReport, DeliveryTransport, SendOptions } from "./transport.js";
import type { AttemptOutcome, PreparedRequest } from "./types.js";

/** What the transport needs of a loaded function (functions/runtime.ts's FunctionModule). */
export interface DestinationFunction {
  readonly file: string;
  has(handler: "onBatch"): boolean;
  runEvent(event: unknown, settings: FunctionSettings): Promise<InvocationRecord>;
  runBatch(events: readonly unknown[], settings: FunctionSettings): Promise<BatchRecord>;
  close(): Promise<void>;
}

/** A destination function with its settings, under its target's URL. */
export interface FunctionDestination {
  fn: DestinationFunction;
  settings: FunctionSettings;
}

export interface FunctionTransportOptions {
  /** Where every other target goes (undici); without it, a URL that is not a function's is refused. */
  others?: DeliveryTransport;
  /**
   * The function uses a package that is not installed here (docs/functions.md#third-party-globals):
   * a problem of the setup, not of the event. The attempt is reported as a network failure would be
   * (retried), so a command that stops on this leaves the event interrupted, never failed.
   */
  onSetupProblem?: (problem: string, file: string) => void;
}

/**
 * A destination function as one more transport of THE delivery engine (docs/functions.md#as-a-destination):
 * each attempt is one invocation, its outcome mapped as the service maps it, in the engine's terms:
 * a return is a 2xx (its value the answer's JSON body); `InvalidEventPayload`, `ValidationError`
 * and any other error a 4xx (never retried); `RetryError` a 5xx and the 5 s limit a timeout (both
 * retried on the destination's schedule); no handler or `EventNotSupported` a skip (done, no
 * failure). The engine's per-attempt timeout does not apply: the function's own limit does.
 */
export class FunctionTransport implements DeliveryTransport {
  constructor(
    private readonly functions: ReadonlyMap<string, FunctionDestination>,
    private readonly options: FunctionTransportOptions = {},
  ) {}

  /** One invocation; `options.timeoutMs` does not bound it (the function's own limit does); `options.signal` cuts it short for the engine. */
  send(request: PreparedRequest, options: SendOptions): Promise<AttemptReport> {
    const destination = this.functions.get(request.url);
    if (destination === undefined) {
      if (this.options.others) return this.options.others.send(request, options);
      const reason = `no destination function at ${request.url}`;
      return Promise.resolve({ outcome: { kind: "invalid", reason }, status: null, error: reason, ms: 0 });
    }
    const capture = options.captureResponse === true;
    const run =
      request.items !== undefined && destination.fn.has("onBatch") ? this.batch(destination, request, capture) : this.event(destination, request, capture);
    return options.signal === undefined ? run : unlessCut(run, options.signal);
  }

  /** Closes the other transport; the functions are closed by whoever loaded them (cli/shared/functions.ts), not here as well. */
  async close(): Promise<void> {
    await this.options.others?.close();
  }

  private async event(destination: FunctionDestination, request: PreparedRequest, capture: boolean): Promise<AttemptReport> {
    // A fresh event for each invocation, parsed from the exact bytes: a handler may change what it gets.
    const events = eventsOf(request);
    if (events.length !== 1) return this.each(destination, events, capture);
    const record = await destination.fn.runEvent(events[0], destination.settings);
    return this.reportOf(destination, record, record.outcome, capture);
  }

  /** A batch to a function without onBatch (not sent so by the commands): each event to its handler. */
  private async each(destination: FunctionDestination, events: readonly unknown[], capture: boolean): Promise<AttemptReport> {
    const records = await Promise.all(events.map((event) => destination.fn.runEvent(event, destination.settings)));
    const items = records.map((record) => this.reportOf(destination, record, record.outcome, capture));
    return { ...(items[0] as AttemptReport), items };
  }

  private async batch(destination: FunctionDestination, request: PreparedRequest, capture: boolean): Promise<AttemptReport> {
    const record = await destination.fn.runBatch(eventsOf(request), destination.settings);
    const report = this.reportOf(destination, record, record.outcome, capture);
    report.items = record.events.map((outcome) => this.reportOf(destination, record, outcome, capture));
    return report;
  }

  private reportOf(destination: FunctionDestination, record: InvocationRecord, outcome: Outcome, capture: boolean): AttemptReport {
    if (outcome.kind === "failed" && outcome.setup) this.options.onSetupProblem?.(outcome.reason, destination.fn.file);
    const report: AttemptReport = { ...attemptOf(outcome), ms: record.ms, invocation: record };
    if (capture && report.status !== null) report.captured = answerOf(record, outcome);
    return report;
  }
}

/** The event of a request, or a batch's events (its body is their JSON array). */
function eventsOf(request: PreparedRequest): unknown[] {
  const value: unknown = JSON.parse(request.body.toString("utf8"));
  return request.items !== undefined && Array.isArray(value) ? value : [value];
}

/** An invocation's outcome in the engine's terms (docs/functions.md#as-a-destination). */
function attemptOf(outcome: Outcome): Pick<AttemptReport, "outcome" | "status" | "error"> {
  switch (outcome.kind) {
    case "delivered":
      return { outcome: DELIVERED, status: 200, error: null };
    case "skipped":
      return { outcome: { kind: "skipped", reason: outcome.reason }, status: null, error: null };
    case "failed":
      // A package to install: retried as the network is, so a run that stops on it loses nothing.
      if (outcome.setup) return { outcome: { kind: "network", code: "SETUP" }, status: null, error: `setup: ${outcome.reason}` };
      return { outcome: REJECTED, status: 400, error: `${outcome.errorType}: ${outcome.reason}` };
    case "retry":
      if (outcome.errorType === "Timeout") return { outcome: { kind: "timeout" }, status: null, error: `Timeout: ${outcome.reason}` };
      return { outcome: TO_RETRY, status: 500, error: `Retry: ${outcome.reason}` };
  }
}

const DELIVERED: AttemptOutcome = { kind: "status", status: 200 };
const REJECTED: AttemptOutcome = { kind: "status", status: 400 };
const TO_RETRY: AttemptOutcome = { kind: "status", status: 500 };

/**
 * What `replay --results` keeps as the answer: the returned value as JSON for a delivered event
 * (none for `undefined`); for an error, its service name, class and message, so `--compare`
 * tells a changed error apart.
 */
function answerOf(record: InvocationRecord, outcome: Outcome): CapturedResponse {
  if (outcome.kind === "delivered") {
    const json = returnedJson(record.returned);
    return json === undefined ? { contentType: null, body: keepBody("") } : { contentType: "application/json", body: keepBody(json) };
  }
  const error = { errorType: "errorType" in outcome ? outcome.errorType : null, reason: "reason" in outcome ? outcome.reason : null };
  return { contentType: "application/json", body: keepBody(JSON.stringify(error)) };
}

function returnedJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    // A cycle or a BigInt: no JSON answer to compare.
    return JSON.stringify({ unserializable: typeof value });
  }
}

/** The invocation, or as soon as `cut` aborts, an interrupted report (the invocation runs on: no timer stops a handler). */
function unlessCut(run: Promise<AttemptReport>, cut: AbortSignal): Promise<AttemptReport> {
  const interrupted: AttemptReport = { outcome: { kind: "network", code: "ABORT_ERR" }, status: null, error: "interrupted", ms: 0 };
  if (cut.aborted) return Promise.resolve(interrupted);
  return new Promise((resolve) => {
    const stop = onAbort(cut, () => resolve(interrupted));
    run.then((report) => {
      stop();
      resolve(report);
    });
  });
}
