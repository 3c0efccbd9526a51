import type { Target } from "../config/destination.js";
import type { Clock } from "../util/clock.js";
import type { RequestContent } from "./actions-request.js";
import { classifyOutcome, type NextRound } from "./policy.js";
import type { RetryRules } from "./retry-rules.js";
import type { AttemptReport, SendOptions } from "./transport.js";
import type { AttemptOutcome, DeliverCall, DeliveryResult, PreparedRequest } from "./types.js";
import { attemptEvent, finish, resultOf, tellAttempt, UrlState } from "./url-state.js";

/** What a function's batch takes of the engine that sends it: its requests, attempts, schedule and waits. */
export interface BatchEngine {
  readonly rules: RetryRules;
  readonly clock: Clock;
  /** The exact request for a content, as the engine prepares any (DeliveryEngine.prepareContent). */
  prepareContent(target: Target, content: RequestContent): PreparedRequest;
  sendOptionsOf(call: DeliverCall): SendOptions;
  send(request: PreparedRequest, options: SendOptions): Promise<AttemptReport>;
  /** The round after `round`, given the outcomes to retry: the engine's retry rules and window. */
  planAfter(round: number, outcomes: readonly AttemptOutcome[], firstAttemptAt: number): NextRound;
  /** Waits before the next round; false when the signal stopped the wait. */
  wait(ms: number, signal: AbortSignal | undefined): Promise<boolean>;
}

/** One event of a function's batch: its bytes, its target state, the rounds it took, whether its last answer delivered it, whether a stop cut it short. */
interface BatchItem {
  bytes: Buffer;
  state: UrlState;
  rounds: number;
  delivered: boolean;
  interrupted: boolean;
}

/**
 * A destination function's batch (docs/functions.md#batches): the events go in one request (their
 * JSON array, for `onBatch`), each gets its own outcome from the transport, and only the events
 * to be retried go again, together, on the destination's schedule. One result per event, in order.
 */
export async function deliverFunctionBatch(engine: BatchEngine, target: Target, bodies: readonly Buffer[], call: DeliverCall): Promise<DeliveryResult[]> {
  const first = batchRequest(engine, target, bodies);
  // An event is sent inside its batch's request, never alone: its state holds the batch's.
  const items = bodies.map((bytes): BatchItem => ({ bytes, state: new UrlState(target, first), rounds: 0, delivered: false, interrupted: false }));
  await runBatch(engine, target, items, first, call);
  return items.map(({ state, rounds, delivered, interrupted }) => resultOf([state], !interrupted && delivered, rounds, interrupted));
}

/** The rounds: each sends the pending events together (the first round `request`); those the transport says to retry wait and go again. */
async function runBatch(engine: BatchEngine, target: Target, items: BatchItem[], request: PreparedRequest, call: DeliverCall): Promise<void> {
  if (call.signal?.aborted) return interrupt(items);
  const firstAttemptAt = call.firstAttemptAt ?? engine.clock.now();
  let pending = items;
  for (let round = 1; ; round++) {
    const report = await attemptBatch(engine, request, call);
    if (report === undefined) return interrupt(pending);
    const retried = recordBatch(pending, report, round, engine.rules);
    const plan =
      retried.length === 0
        ? undefined
        : engine.planAfter(
            round,
            retried.map((entry) => entry.outcome),
            firstAttemptAt,
          );
    const stopping = plan?.retry === true && call.signal?.aborted === true;
    const retryInMs = plan?.retry === true && !stopping ? plan.waitMs : undefined;
    if (call.onAttempt) tellAttempt(call.onAttempt, attemptEvent(target.url, round, report, batchError(report), request, retryInMs));
    pending = retried.map((entry) => entry.item);
    if (plan === undefined) return;
    if (!plan.retry) {
      finish(
        plan,
        pending.map((item) => item.state),
      );
      return;
    }
    if (stopping || !(await engine.wait(plan.waitMs, call.signal))) return interrupt(pending);
    request = batchRequest(
      engine,
      target,
      pending.map((item) => item.bytes),
    );
  }
}

/** The request holding these events: their JSON array. */
function batchRequest(engine: BatchEngine, target: Target, events: readonly Buffer[]): PreparedRequest {
  const request = engine.prepareContent(target, {
    method: "POST",
    body: Buffer.from(`[${events.map((bytes) => bytes.toString("utf8")).join(",")}]`),
    signed: undefined,
  });
  request.items = events.length;
  return request;
}

/** One batch request, cut short (undefined) when the call cuts attempts and its signal aborts. */
async function attemptBatch(engine: BatchEngine, request: PreparedRequest, call: DeliverCall): Promise<AttemptReport | undefined> {
  const send = engine.sendOptionsOf(call);
  if (send.signal?.aborted) return undefined;
  const report = await engine.send(request, send);
  return send.signal?.aborted ? undefined : report;
}

function interrupt(items: readonly BatchItem[]): void {
  for (const item of items) item.interrupted = true;
}

/** Records a batch round's outcome on each of its events; the events to retry, with their outcomes. */
function recordBatch(pending: readonly BatchItem[], report: AttemptReport, round: number, rules: RetryRules): { item: BatchItem; outcome: AttemptOutcome }[] {
  const retried: { item: BatchItem; outcome: AttemptOutcome }[] = [];
  for (const [i, item] of pending.entries()) {
    const own = report.items?.[i] ?? report;
    item.rounds = round;
    item.state.record(own);
    const verdict = classifyOutcome(own.outcome, rules);
    item.delivered = verdict === "delivered";
    if (verdict === "retry") retried.push({ item, outcome: own.outcome });
  }
  return retried;
}

/** A batch attempt's error: how many of its events were not delivered (the first one's reason). */
function batchError(report: AttemptReport): string | null {
  const failing = (report.items ?? [report]).filter((item) => item.error !== null);
  return failing.length === 0 ? null : report.items ? `${failing.length} of ${report.items.length} events: ${failing[0]?.error}` : report.error;
}
