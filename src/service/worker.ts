import type { DeliveryEngine } from "../delivery/deliver.js";
import type { AttemptEvent, DeliveryResult } from "../delivery/types.js";
import { systemClock, type Clock } from "../util/clock.js";
import type { Failure, MessageQueue, QueuedMessage } from "./queue.js";

export interface WorkerOptions {
  queue: MessageQueue;
  engine: Pick<DeliveryEngine, "deliver">;
  /** Deliveries in flight at once. */
  concurrency: number;
  clock?: Clock;
  /** Called when a message is delivered or given up (not when interrupted by stop). */
  onSettled?: (message: QueuedMessage, result: DeliveryResult) => void;
}

interface InFlight {
  message: QueuedMessage;
  startedAt: number;
  /** The start time is in the queue (recorded before, or by the periodic write). */
  startRecorded: boolean;
  retrying: boolean;
}

// A delivery that outlives one attempt gets its start time written, so a
// restart keeps its retry window; quick ones never cost that write.
const RECORD_START_EVERY_MS = 1_000;
const CLAIM_BATCH = 256;

/**
 * Drains the queue through THE delivery engine with bounded concurrency.
 * Interrupted deliveries (stop) are left pending in the queue for the next run.
 */
export class DeliveryWorker {
  private readonly queue: MessageQueue;
  private readonly engine: Pick<DeliveryEngine, "deliver">;
  private readonly concurrency: number;
  private readonly clock: Clock;
  private readonly onSettled: WorkerOptions["onSettled"];
  private readonly controller = new AbortController();
  private readonly inFlight = new Map<number, InFlight>();
  // Attempt events name the request body, not the message: map bodies of messages in flight.
  private readonly byBody = new Map<string, InFlight>();
  private readonly running = new Set<Promise<void>>();
  private buffer: QueuedMessage[] = [];
  private timer: ReturnType<Clock["setTimeout"]> | undefined;
  private stopped = false;
  delivered = 0;
  failed = 0;

  constructor(options: WorkerOptions) {
    this.queue = options.queue;
    this.engine = options.engine;
    this.concurrency = Math.max(1, options.concurrency);
    this.clock = options.clock ?? systemClock;
    this.onSettled = options.onSettled;
  }

  /** Deliveries in flight that have had a failed attempt and wait for another. */
  get retrying(): number {
    let count = 0;
    for (const entry of this.inFlight.values()) if (entry.retrying) count += 1;
    return count;
  }

  /** Give to DeliveryOptions.onAttempt. */
  readonly onAttempt = (event: AttemptEvent): void => {
    if (event.retryInMs === undefined) return;
    const entry = this.byBody.get(event.request.body.toString("utf8"));
    if (entry) entry.retrying = true;
  };

  start(): void {
    this.scheduleStartRecording();
    this.pump();
  }

  /** New messages were queued. */
  notify(): void {
    this.pump();
  }

  /** Stops taking messages, cancels retry waits, and waits for attempts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.controller.abort();
    if (this.timer) this.clock.clearTimeout(this.timer);
    await Promise.all([...this.running]);
  }

  private pump(): void {
    while (!this.stopped && this.inFlight.size < this.concurrency) {
      if (this.buffer.length === 0) {
        this.buffer = this.queue.claim(CLAIM_BATCH);
        if (this.buffer.length === 0) return;
      }
      const message = this.buffer.shift() as QueuedMessage;
      const run = this.deliverOne(message);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
  }

  private async deliverOne(message: QueuedMessage): Promise<void> {
    const entry: InFlight = {
      message,
      startedAt: message.firstAttemptAt ?? this.clock.now(),
      startRecorded: message.firstAttemptAt !== undefined,
      retrying: false,
    };
    this.inFlight.set(message.id, entry);
    this.byBody.set(message.body, entry);
    let result: DeliveryResult;
    try {
      result = await this.engine.deliver(message.body, {
        signal: this.controller.signal,
        ...(message.firstAttemptAt !== undefined ? { firstAttemptAt: message.firstAttemptAt } : {}),
      });
    } catch (error) {
      // The engine does not reject for delivery failures; anything else is a bug: keep the message pending.
      result = { delivered: false, interrupted: true, rounds: 0, urls: [] };
      void error;
    } finally {
      this.inFlight.delete(message.id);
      if (this.byBody.get(message.body) === entry) this.byBody.delete(message.body);
    }
    if (!result.interrupted) {
      if (result.delivered) {
        this.delivered += 1;
        this.queue.delivered(message.id);
      } else {
        this.failed += 1;
        this.queue.failed(message.id, failureOf(result));
      }
      this.onSettled?.(message, result);
    }
    this.pump();
  }

  private scheduleStartRecording(): void {
    this.timer = this.clock.setTimeout(() => {
      if (this.stopped) return;
      const starts = new Map<number, number>();
      const now = this.clock.now();
      for (const [id, entry] of this.inFlight) {
        if (!entry.startRecorded && now - entry.startedAt >= RECORD_START_EVERY_MS / 2) {
          entry.startRecorded = true;
          starts.set(id, entry.startedAt);
        }
      }
      this.queue.recordFirstAttempts(starts);
      this.scheduleStartRecording();
    }, RECORD_START_EVERY_MS);
  }
}

/** Why a message was given up, for the failed table. */
export function failureOf(result: DeliveryResult): Failure {
  const reasons = result.urls.map((url) => `${url.url}: ${url.error ?? `status ${url.status ?? "none"}`}`);
  const last = result.urls.find((url) => url.status !== null);
  return {
    reason: reasons.join("; ") || "no webhook URL configured",
    attempts: result.urls.reduce((max, url) => Math.max(max, url.attempts), 0),
    status: last?.status ?? null,
  };
}
