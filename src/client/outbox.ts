import { randomUUID } from "node:crypto";
import type { EventEmitter } from "node:events";
import { sleep, type TimerHandle } from "../util/clock.js";
import { BatchDeliveryError, QueueFullError } from "../errors.js";
import { holdProcess } from "../util/hold-process.js";
import { Batcher, batchBody, envelopeOverhead, type SealedBatch } from "./batcher.js";
import { LIBRARY } from "./library.js";
import type { ClientSettings } from "./options.js";
import { describeOutcome, isRetryable, isSuccess, retryDelayMs, type SendOutcome } from "./retry.js";
import type { Transport } from "./transport.js";
import type { AnalyticsEvents, AnalyticsStats, Callback, CallType, FlushEvent } from "./types.js";

/**
 * The client's queue and flush machinery (docs/serve-api.md#client-batching): holds accepted
 * messages within the queue's bounds, seals batches by count, size or interval, sends a few at
 * once with retries, and reports each batch to the callbacks and the client's events. Delivery
 * problems never throw or reject.
 */

/** A sealed batch on its way: waiting for a free request slot, in flight, or waiting to retry. */
interface OutgoingBatch {
  batch: SealedBatch<Callback>;
  /** The request body's messageId, the same on every retry. */
  id: string;
  done: Promise<void>;
  resolve: () => void;
}

/** Where batches are reported: the client itself. */
export type BatchEvents = Pick<EventEmitter<AnalyticsEvents>, "emit" | "listenerCount">;

export class Outbox {
  private readonly batcher: Batcher<Callback>;
  private readonly overhead: number;
  private readonly waiting: OutgoingBatch[] = [];
  private readonly active = new Set<OutgoingBatch>();
  private timer: TimerHandle | undefined;
  private lastFlushAt: number;
  private pumpScheduled = false;
  private full = false;
  private readonly counters = { queued: 0, queuedBytes: 0, delivered: 0, failed: 0, dropped: 0 };

  constructor(
    private readonly settings: ClientSettings,
    private readonly transport: Transport,
    private readonly events: BatchEvents,
  ) {
    this.overhead = envelopeOverhead(LIBRARY);
    this.batcher = new Batcher<Callback>({ flushAt: settings.flushAt, overheadBytes: this.overhead });
    this.lastFlushAt = settings.clock.now();
  }

  /** Queues one message's JSON, or drops it when the queue is full (its callback then gets a QueueFullError). */
  add(type: CallType, messageId: string, json: string, bytes: number, callback: Callback | undefined): void {
    const { maxQueueSize, maxQueueBytes, debug, log, clock } = this.settings;
    if (this.counters.queued >= maxQueueSize || this.counters.queuedBytes + bytes > maxQueueBytes) {
      this.drop(type, messageId, callback);
      return;
    }
    this.counters.queued += 1;
    this.counters.queuedBytes += bytes;
    if (debug) log(`analytics: queued ${type} ${messageId} (${bytes} bytes, ${this.counters.queued} queued)`);

    const sealed = this.batcher.add({ json, bytes, messageId, callback });
    if (sealed.length > 0) {
      for (const batch of sealed) this.schedule(batch);
      this.lastFlushAt = clock.now();
    }
    if (this.batcher.size > 0 && this.timer === undefined) this.armTimer();
  }

  /** Sends everything queued so far; resolves when all of it is delivered or has finally failed. Never rejects. */
  flush(): Promise<void> {
    this.sealOpenBatch();
    const pending = [...this.waiting, ...this.active].map((batch) => batch.done);
    if (pending.length === 0) return Promise.resolve();
    return hold(Promise.all(pending).then(() => undefined));
  }

  /** Stops the timer, flushes and releases connections. Never rejects. */
  async close(): Promise<void> {
    if (this.timer !== undefined) {
      this.settings.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    try {
      await this.flush();
      await hold(this.transport.close());
    } catch (error) {
      this.settings.log(`analytics: close failed: ${describeError(error)}`);
    }
    if (this.settings.debug) this.settings.log("analytics: closed");
  }

  stats(): AnalyticsStats {
    return { ...this.counters, inFlight: this.active.size };
  }

  private drop(type: CallType, messageId: string, callback: Callback | undefined): void {
    this.counters.dropped += 1;
    // Built only when someone will read it: under overload this path runs for every call.
    const limits = (): string => `${this.settings.maxQueueSize} messages or ${this.settings.maxQueueBytes} bytes`;
    if (this.settings.debug) this.settings.log(`analytics: queue full (${limits()}); dropped ${type} ${messageId}`);
    if (callback) {
      const error = new QueueFullError(`The queue is full (${limits()}): ${type} ${messageId} was dropped.`);
      queueMicrotask(() => this.callSafely(callback, error));
    }
    if (!this.full) {
      // One error per overflow episode, not one per dropped call.
      this.full = true;
      const error = new QueueFullError(`The queue is full (${limits()}): new calls are dropped until it drains. The server is slower than the calls.`);
      queueMicrotask(() => this.emitError(error));
    }
  }

  private armTimer(): void {
    const { clock, flushAfter } = this.settings;
    const delay = Math.max(0, this.lastFlushAt + flushAfter - clock.now());
    this.timer = clock.setTimeout(() => this.onTimer(), delay);
  }

  private onTimer(): void {
    this.timer = undefined;
    if (this.batcher.size === 0) return;
    // A count or size flush since the timer was set moved "the last flush" later.
    if (this.settings.clock.now() < this.lastFlushAt + this.settings.flushAfter) this.armTimer();
    else this.sealOpenBatch();
  }

  private sealOpenBatch(): void {
    const batch = this.batcher.seal();
    if (!batch) return;
    this.schedule(batch);
    this.lastFlushAt = this.settings.clock.now();
  }

  private schedule(batch: SealedBatch<Callback>): void {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.waiting.push({ batch, id: randomUUID(), done, resolve });
    // Requests start after the caller's current task, keeping the call itself cheap.
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      queueMicrotask(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
  }

  private pump(): void {
    while (this.active.size < this.settings.concurrency) {
      const next = this.waiting.shift();
      if (!next) return;
      this.active.add(next);
      void this.send(next);
    }
  }

  private async send(outgoing: OutgoingBatch): Promise<void> {
    const { batch, id } = outgoing;
    const { clock, random, maxRetries, debug, log } = this.settings;
    const count = batch.messages.length;
    const bytes = this.overhead + batch.bytes;
    let attempts = 0;
    let outcome: SendOutcome | undefined;
    let failure: string | undefined;
    try {
      for (;;) {
        attempts += 1;
        const sentAt = new Date(clock.now()).toISOString();
        const body = batchBody(batch.messages, { library: LIBRARY, messageId: id, sentAt });
        if (debug) log(`analytics: sending batch ${id}: ${count} messages, ${bytes} bytes (attempt ${attempts})`);
        outcome = await this.transport.post(body);
        if (isSuccess(outcome) || !isRetryable(outcome) || attempts > maxRetries) break;
        const wait = retryDelayMs(attempts, random, outcome.kind === "status" ? outcome.retryAfterMs : undefined);
        if (debug) log(`analytics: batch ${id} failed (${describeOutcome(outcome)}); retrying in ${wait} ms`);
        await sleep(clock, wait);
      }
    } catch (error) {
      // Not expected (the transport never rejects), but a batch must still finish.
      failure = describeError(error);
    }
    try {
      this.finish(outgoing, { bytes, attempts, outcome, failure });
    } catch (error) {
      log(`analytics: internal error while finishing batch ${id}: ${describeError(error)}`);
    } finally {
      // Whatever happened above, flush() waiters are released and the next batch may start.
      this.active.delete(outgoing);
      outgoing.resolve();
      this.pump();
    }
  }

  private finish({ batch, id }: OutgoingBatch, end: { bytes: number; attempts: number; outcome: SendOutcome | undefined; failure: string | undefined }): void {
    const { bytes, attempts, outcome, failure } = end;
    const { debug, log, maxQueueSize, maxQueueBytes } = this.settings;
    const count = batch.messages.length;
    this.counters.queued -= count;
    this.counters.queuedBytes -= batch.bytes - (count - 1);
    const delivered = failure === undefined && outcome !== undefined && isSuccess(outcome);
    if (delivered) {
      this.counters.delivered += count;
      const status = outcome.kind === "status" ? outcome.status : 0;
      if (debug) log(`analytics: delivered batch ${id}: ${count} messages, HTTP ${status} after ${attempts} attempt(s)`);
      for (const message of batch.messages) if (message.callback) this.callSafely(message.callback);
      if (this.events.listenerCount("flush") > 0) {
        const event: FlushEvent = { batchId: id, messageIds: batch.messages.map((m) => m.messageId), bytes, attempts, status };
        try {
          this.events.emit("flush", event);
        } catch (error) {
          log(`analytics: a 'flush' listener threw: ${describeError(error)}`);
        }
      }
    } else {
      this.counters.failed += count;
      const reason = failure ?? (outcome ? describeOutcome(outcome) : "not sent");
      const error = new BatchDeliveryError(
        `Failed to send a batch of ${count} message(s) to ${this.transport.url} after ${attempts} attempt(s): ${reason}`,
        outcome?.kind === "status" ? outcome.status : null,
        attempts,
        batch.messages.map((m) => m.messageId),
      );
      if (debug) log(`analytics: ${error.message}`);
      for (const message of batch.messages) if (message.callback) this.callSafely(message.callback, error);
      this.emitError(error);
    }
    if (this.full && this.counters.queued < maxQueueSize && this.counters.queuedBytes < maxQueueBytes) {
      this.full = false;
      if (debug) log(`analytics: queue has room again (${this.counters.dropped} dropped so far)`);
    }
  }

  private emitError(error: Error): void {
    // An 'error' event nobody listens for would throw: log it instead.
    if (this.events.listenerCount("error") === 0) {
      this.settings.log(`analytics: ${error.message}`);
      return;
    }
    try {
      this.events.emit("error", error);
    } catch (thrown) {
      this.settings.log(`analytics: an 'error' listener threw: ${describeError(thrown)}`);
    }
  }

  private callSafely(callback: Callback, error?: Error): void {
    try {
      if (error) callback(error);
      else callback();
    } catch (thrown) {
      this.settings.log(`analytics: a callback threw: ${describeError(thrown)}`);
    }
  }
}

/**
 * Keeps the process alive while someone awaits flush()/close(): the flush and
 * retry timers are unref'd, and an awaited promise alone does not hold the loop.
 */
function hold<T>(promise: Promise<T>): Promise<T> {
  return promise.finally(holdProcess());
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
