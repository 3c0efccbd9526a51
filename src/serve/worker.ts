import { DEFAULT_BATCH_WAIT_MS } from "../config/actions.js";
import { FUNCTION_BATCH_WAIT_MS } from "../functions/types.js";
import type { DestinationSettings, Target } from "../config/destination.js";
import type { RequestContent } from "../delivery/actions-request.js";
import type { DeliveryEngine } from "../delivery/deliver.js";
import { failureOf, type Failure } from "../delivery/failure.js";
import { redactText, type Secrets } from "../safe-text/redact.js";
import type { AttemptEvent, DeliverCall, DeliveryResult } from "../delivery/types.js";
import { Dispatcher, type DispatchEntry, type DispatchOptions } from "../dispatch/dispatcher.js";
import { allFunctions, batchingFor } from "../dispatch/units.js";
import { systemClock, type Clock, type TimerHandle } from "../util/clock.js";
import type { MessageQueue, QueuedMessage } from "./queue/message-queue.js";

export interface WorkerOptions {
  queue: MessageQueue;
  /** `deliverContent` is needed with `batching`; `deliverBatch` with a destination function's batches. */
  engine: Pick<DeliveryEngine, "deliver"> & Partial<Pick<DeliveryEngine, "deliverContent" | "deliverBatch">>;
  /**
   * Webhooks (Actions) batches (docs/actions.md#batches): a message is marked delivered only once
   * every webhook's batch holding it got a 2xx. See `forwardingBatches`.
   */
  batching?: DispatchOptions<DispatchEntry>["batching"];
  /** Deliveries in flight at once. */
  concurrency: number;
  clock?: Clock;
  /** Called when a message is delivered or given up (not when interrupted by stop). */
  onSettled?: ((message: QueuedMessage, result: DeliveryResult) => void) | undefined;
  /** Masked in the stored failure reasons (serve --failed may run without it). */
  secret?: Secrets;
  /** Called after every attempt (serve's failing and recovered lines: target-health.ts). */
  onAttempt?: ((event: AttemptEvent) => void) | undefined;
}

interface QueueEntry extends DispatchEntry {
  message: QueuedMessage;
}

// A delivery that outlives one attempt gets its start time written, so a
// restart keeps its retry window; quick ones never cost that write.
const RECORD_START_EVERY_MS = 1_000;
const CLAIM_BATCH = 256;
const NOT_DELIVERED: DeliveryResult = { delivered: false, interrupted: true, rounds: 0, urls: [] };

/** The queue as the dispatcher's source: claims pending messages, waits for more until stopped. */
class QueueSource implements AsyncIterable<QueueEntry[]> {
  private wake: (() => void) | undefined;

  constructor(
    private readonly queue: MessageQueue,
    private readonly signal: AbortSignal,
  ) {}

  /** New messages were queued. */
  notify(): void {
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<QueueEntry[]> {
    while (!this.signal.aborted) {
      const claimed = this.queue.claim(CLAIM_BATCH);
      if (claimed.length > 0) yield claimed.map(toEntry);
      else await this.nextNotice();
    }
  }

  private nextNotice(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.wake = undefined;
        this.signal.removeEventListener("abort", done);
        resolve();
      };
      this.wake = done;
      this.signal.addEventListener("abort", done, { once: true });
    });
  }
}

function toEntry(message: QueuedMessage): QueueEntry {
  // The stored body is JSON.stringify of the outgoing message (transform.ts): canonical.
  // A scheme's message id is derived from the stored body, so a retry after a restart keeps it (docs/schemes.md#timestamps).
  return {
    line: message.id,
    orderKey: undefined,
    body: message.body,
    time: undefined,
    firstAttemptAt: message.firstAttemptAt,
    message,
    canonical: true,
    messageId: message.body,
  };
}

/**
 * The worker's batches for serve's settings: under Webhooks (Actions) with a batch size, partial
 * ones sent after the batch wait; a destination function's onBatch, after the service's 10 s.
 */
export function forwardingBatches(settings: Pick<DestinationSettings, "destination" | "targets" | "batchWaitMs">): WorkerOptions["batching"] {
  return batchingFor(settings, allFunctions(settings.targets) ? FUNCTION_BATCH_WAIT_MS : (settings.batchWaitMs ?? DEFAULT_BATCH_WAIT_MS));
}

/** Start times of deliveries in flight, written to the queue once they outlive an attempt or so. */
class StartRecorder {
  private readonly inFlight = new Map<number, { startedAt: number; recorded: boolean }>();

  constructor(
    private readonly queue: MessageQueue,
    private readonly clock: Clock,
  ) {}

  started(message: QueuedMessage): void {
    this.inFlight.set(message.id, { startedAt: message.firstAttemptAt ?? this.clock.now(), recorded: message.firstAttemptAt !== undefined });
  }

  finished(message: QueuedMessage): void {
    this.inFlight.delete(message.id);
  }

  /** Writes the start of every delivery running for half the period or more. */
  write(): void {
    const starts = new Map<number, number>();
    const now = this.clock.now();
    for (const [id, entry] of this.inFlight) {
      if (!entry.recorded && now - entry.startedAt >= RECORD_START_EVERY_MS / 2) {
        entry.recorded = true;
        starts.set(id, entry.startedAt);
      }
    }
    this.queue.recordFirstAttempts(starts);
  }
}

/**
 * Drains the queue through the dispatcher with bounded concurrency.
 * Interrupted deliveries (stop) are left pending in the queue for the next run.
 */
export class DeliveryWorker {
  private readonly queue: MessageQueue;
  private readonly secret: Secrets;
  private readonly clock: Clock;
  private readonly controller = new AbortController();
  private readonly source: QueueSource;
  private readonly starts: StartRecorder;
  private readonly dispatcher: Dispatcher<QueueEntry>;
  private running: Promise<unknown> | undefined;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(options: WorkerOptions) {
    this.queue = options.queue;
    this.secret = options.secret;
    this.clock = options.clock ?? systemClock;
    this.source = new QueueSource(this.queue, this.controller.signal);
    this.starts = new StartRecorder(this.queue, this.clock);
    this.dispatcher = new Dispatcher<QueueEntry>({
      source: this.source,
      engine: keepPendingOnError(options.engine),
      // A stop cuts the attempts in flight rather than waiting for a slow destination: they stay queued.
      // Set on each message's call by the dispatcher, not copied into a new call per message here.
      cutAttempts: true,
      batching: options.batching,
      concurrency: Math.max(1, options.concurrency),
      clock: this.clock,
      signal: this.controller.signal,
      hooks: {
        onStart: (entry) => this.starts.started(entry.message),
        onResult: (entry, result) => this.settle(entry.message, result, options.onSettled),
        onAttempt: (_entry, event) => options.onAttempt?.(event),
      },
    });
  }

  get delivered(): number {
    return this.dispatcher.progress.delivered;
  }

  get failed(): number {
    return this.dispatcher.progress.failed;
  }

  /** Skipped by a destination function: done, not failed. */
  get skipped(): number {
    return this.dispatcher.progress.skipped;
  }

  /** Deliveries in flight that have had a failed attempt and wait for another. */
  get retrying(): number {
    return this.dispatcher.progress.retrying;
  }

  start(): void {
    this.scheduleStartRecording();
    this.running = this.dispatcher.run().catch(() => undefined);
  }

  /** New messages were queued. */
  notify(): void {
    this.source.notify();
  }

  /** Stops taking messages, cancels retry waits and cuts the attempts in flight (they stay pending). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.controller.abort();
    if (this.timer) this.clock.clearTimeout(this.timer);
    await this.running;
  }

  private settle(message: QueuedMessage, result: DeliveryResult, onSettled: WorkerOptions["onSettled"]): void {
    this.starts.finished(message);
    if (result.interrupted) return;
    // A message a destination function skipped is done: it leaves the queue as a delivered one does.
    if (result.delivered || result.skipped) this.queue.delivered(message.id);
    else this.queue.failed(message.id, storedFailure(result, this.secret));
    onSettled?.(message, result);
  }

  private scheduleStartRecording(): void {
    this.timer = this.clock.setTimeout(() => {
      if (this.stopped) return;
      this.starts.write();
      this.scheduleStartRecording();
    }, RECORD_START_EVERY_MS);
  }
}

/** The engine does not reject for delivery failures; anything else is a bug: the message is kept pending. */
function keepPendingOnError(engine: WorkerOptions["engine"]): WorkerOptions["engine"] {
  const { deliverContent, deliverBatch } = engine;
  return {
    deliver: (body: string | Uint8Array, call?: DeliverCall) => engine.deliver(body, call).catch(() => NOT_DELIVERED),
    ...(deliverContent
      ? {
          deliverContent: (target: Target, content: RequestContent, call?: DeliverCall) =>
            deliverContent.call(engine, target, content, call).catch(() => NOT_DELIVERED),
        }
      : {}),
    ...(deliverBatch
      ? {
          deliverBatch: (target: Target, bodies: readonly (string | Uint8Array)[], call?: DeliverCall) =>
            deliverBatch.call(engine, target, bodies, call).catch(() => bodies.map(() => NOT_DELIVERED)),
        }
      : {}),
  };
}

/** A failure as serve's failed table keeps it: credentials in the URLs and the secret masked (the one redaction). */
function storedFailure(result: DeliveryResult, secret: Secrets): Failure {
  const failure = failureOf(result, { alwaysNameUrl: true });
  return { ...failure, reason: redactText(failure.reason, secret) };
}
