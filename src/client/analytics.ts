import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { ClosedError, ConfigError, ValidationError } from "../errors.js";
import { sleep, systemClock, type Clock, type Random, type TimerHandle } from "../util/clock.js";
import { holdProcess } from "../util/keep-alive.js";
import { Batcher, batchBody, envelopeOverhead, type SealedBatch } from "./batcher.js";
import { BatchDeliveryError, QueueFullError } from "./errors.js";
import { LIBRARY } from "./library.js";
import { describeOutcome, isRetryable, isSuccess, retryDelayMs, type SendOutcome } from "./retry.js";
import { Transport } from "./transport.js";
import type {
  AliasMessage,
  AnalyticsEvents,
  AnalyticsOptions,
  AnalyticsStats,
  Callback,
  CallType,
  FlushEvent,
  GroupMessage,
  IdentifyMessage,
  PageMessage,
  ScreenMessage,
  TrackMessage,
} from "./types.js";
import { checkMessageSize, checkOptions, validateCall, wireIds } from "./validate.js";
import { MAX_TIMER_MS } from "../util/numbers.js";

const DEFAULT_ENDPOINT = "https://api.segment.io";
const DEFAULT_FLUSH_AT = 20;
const DEFAULT_FLUSH_AFTER_MS = 5_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RETRIES = 3;
const DEFAULT_MAX_QUEUE_SIZE = 10_000;
const DEFAULT_MAX_QUEUE_BYTES = 32 * 1024 * 1024;
/** Batch requests in flight at once: each carries up to 500 KB of calls, so a few keep a collection API busy. */
const DEFAULT_BATCHES_IN_FLIGHT = 4;

/** A sealed batch on its way: waiting for a free request slot, in flight, or waiting to retry. */
interface OutgoingBatch {
  batch: SealedBatch<Callback>;
  /** The request body's messageId, the same on every retry. */
  id: string;
  done: Promise<void>;
  resolve: () => void;
}

/**
 * The batching analytics client (docs/serve-api.md#client-library). Calls validate synchronously
 * and queue in memory; batches go out from the background by count, by
 * interval since the last flush, or before the 500 KB request limit. Delivery
 * problems never throw or reject: they reach callbacks and `error` events.
 */
export class Analytics extends EventEmitter<AnalyticsEvents> {
  private readonly transport: Transport;
  private readonly batcher: Batcher<Callback>;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly flushAfter: number;
  private readonly maxRetries: number;
  private readonly maxQueueSize: number;
  private readonly maxQueueBytes: number;
  private readonly concurrency: number;
  private readonly overhead: number;
  private readonly debug: boolean;
  private readonly log: (line: string) => void;

  private readonly waiting: OutgoingBatch[] = [];
  private readonly active = new Set<OutgoingBatch>();
  private timer: TimerHandle | undefined;
  private lastFlushAt: number;
  private pumpScheduled = false;
  private closing: Promise<void> | undefined;
  private full = false;
  private lastIsoAt = Number.NaN;
  private lastIso = "";
  private readonly counters = { queued: 0, queuedBytes: 0, delivered: 0, failed: 0, dropped: 0 };

  constructor(writeKey: string, options: AnalyticsOptions = {}) {
    super();
    if (typeof writeKey !== "string" || writeKey === "") {
      throw new ConfigError("You must pass your source's write key.", { key: "writeKey" });
    }
    checkOptions(options);
    const flushAt = positiveInteger("flushAt", options.flushAt, DEFAULT_FLUSH_AT);
    this.flushAfter = positiveNumber("flushAfter", options.flushAfter, DEFAULT_FLUSH_AFTER_MS);
    const timeout = positiveNumber("timeout", options.timeout, DEFAULT_REQUEST_TIMEOUT_MS);
    this.maxRetries = nonNegativeInteger("maxRetries", options.maxRetries, DEFAULT_MAX_RETRIES);
    this.maxQueueSize = positiveInteger("maxQueueSize", options.maxQueueSize, DEFAULT_MAX_QUEUE_SIZE);
    this.maxQueueBytes = positiveInteger("maxQueueBytes", options.maxQueueBytes, DEFAULT_MAX_QUEUE_BYTES);
    this.concurrency = positiveInteger("concurrency", options.concurrency, DEFAULT_BATCHES_IN_FLIGHT);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.debug = options.debug ?? false;
    // Without a log, lines go nowhere: the client writes no stream of its own (the package's edge passes stderr).
    const sink = options.log ?? (() => {});
    // Logging must never be the thing that breaks a call or a delivery.
    this.log = (line) => {
      try {
        sink(line);
      } catch {
        // nowhere left to report it
      }
    };
    this.transport = new Transport({
      endpoint: options.endpoint ?? DEFAULT_ENDPOINT,
      writeKey,
      timeoutMs: timeout,
      connections: this.concurrency,
      userAgent: `${LIBRARY.name}/${LIBRARY.version}`,
      now: () => this.clock.now(),
    });
    this.overhead = envelopeOverhead(LIBRARY);
    this.batcher = new Batcher<Callback>({ flushAt, overheadBytes: this.overhead });
    this.lastFlushAt = this.clock.now();
  }

  // One method per call type, as analytics-node has them: each is public API with its own
  // message type and doc, so they stay written out rather than generated.

  /** Records who a user is and their traits. */
  identify(message: IdentifyMessage, callback?: Callback): void {
    this.enqueue("identify", message, callback);
  }

  /** Records an action the user performed. */
  track(message: TrackMessage, callback?: Callback): void {
    this.enqueue("track", message, callback);
  }

  /** Records a page view. */
  page(message: PageMessage, callback?: Callback): void {
    this.enqueue("page", message, callback);
  }

  /** Records a mobile app screen view (the page of apps). */
  screen(message: ScreenMessage, callback?: Callback): void {
    this.enqueue("screen", message, callback);
  }

  /** Associates a user with a group. */
  group(message: GroupMessage, callback?: Callback): void {
    this.enqueue("group", message, callback);
  }

  /** Merges a previous identity into a new one. */
  alias(message: AliasMessage, callback?: Callback): void {
    this.enqueue("alias", message, callback);
  }

  /** Sends everything queued so far; resolves when all of it is delivered or has finally failed. Never rejects. */
  flush(): Promise<void> {
    this.sealOpenBatch();
    const pending = [...this.waiting, ...this.active].map((batch) => batch.done);
    if (pending.length === 0) return Promise.resolve();
    return this.hold(Promise.all(pending).then(() => undefined));
  }

  /** Flushes, stops the timer and releases connections. Safe to call twice; calls afterwards throw. Never rejects. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** Counters: queued (waiting and in flight), delivered, failed, dropped. */
  stats(): AnalyticsStats {
    return { ...this.counters, inFlight: this.active.size };
  }

  private enqueue(type: CallType, message: unknown, callback: Callback | undefined): void {
    if (this.closing) throw new ClosedError(`Cannot call ${type}() after close(): create a new Analytics client.`);
    validateCall(type, message);
    if (callback !== undefined && typeof callback !== "function") {
      throw new ValidationError(`The last argument of ${type}() must be a callback function.`);
    }
    const messageId = (message.messageId as string | undefined) || randomUUID();
    const given = message.timestamp as Date | string | undefined | null;
    const timestamp = given === undefined || given === null ? this.isoNow() : given instanceof Date ? given.toISOString() : given;
    const wire: Record<string, unknown> = { type, ...message, ...wireIds(message), messageId, timestamp };
    wire.type = type;
    let json: string;
    try {
      json = JSON.stringify(wire);
    } catch (error) {
      throw new ValidationError(`Your ${type} message cannot be serialized to JSON: ${(error as Error).message}`);
    }
    const bytes = Buffer.byteLength(json, "utf8");
    checkMessageSize(type, bytes);

    if (this.counters.queued >= this.maxQueueSize || this.counters.queuedBytes + bytes > this.maxQueueBytes) {
      this.drop(type, messageId, callback);
      return;
    }
    this.counters.queued += 1;
    this.counters.queuedBytes += bytes;
    if (this.debug) this.log(`analytics: queued ${type} ${messageId} (${bytes} bytes, ${this.counters.queued} queued)`);

    const sealed = this.batcher.add({ json, bytes, messageId, callback });
    if (sealed.length > 0) {
      for (const batch of sealed) this.schedule(batch);
      this.lastFlushAt = this.clock.now();
    }
    if (this.batcher.size > 0 && this.timer === undefined) this.armTimer();
  }

  /** Now as ISO 8601; calls within the same millisecond share one string. */
  private isoNow(): string {
    const now = this.clock.now();
    if (now !== this.lastIsoAt) {
      this.lastIsoAt = now;
      this.lastIso = new Date(now).toISOString();
    }
    return this.lastIso;
  }

  private drop(type: CallType, messageId: string, callback: Callback | undefined): void {
    this.counters.dropped += 1;
    // Built only when someone will read it: under overload this path runs for every call.
    const limits = (): string => `${this.maxQueueSize} messages or ${this.maxQueueBytes} bytes`;
    if (this.debug) this.log(`analytics: queue full (${limits()}); dropped ${type} ${messageId}`);
    if (callback) {
      const error = new QueueFullError(`The queue is full (${limits()}): ${type} ${messageId} was dropped.`);
      queueMicrotask(() => this.callSafely(callback, error));
    }
    if (!this.full) {
      // One error per overflow episode, not one per dropped call.
      this.full = true;
      const error = new QueueFullError(
        `The queue is full (${limits()}): new calls are dropped until it drains. The server is slower than the calls.`,
      );
      queueMicrotask(() => this.emitError(error));
    }
  }

  private armTimer(): void {
    const delay = Math.max(0, this.lastFlushAt + this.flushAfter - this.clock.now());
    this.timer = this.clock.setTimeout(() => this.onTimer(), delay);
  }

  private onTimer(): void {
    this.timer = undefined;
    if (this.batcher.size === 0) return;
    // A count or size flush since the timer was set moved "the last flush" later.
    if (this.clock.now() < this.lastFlushAt + this.flushAfter) this.armTimer();
    else this.sealOpenBatch();
  }

  private sealOpenBatch(): void {
    const batch = this.batcher.seal();
    if (!batch) return;
    this.schedule(batch);
    this.lastFlushAt = this.clock.now();
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
    while (this.active.size < this.concurrency) {
      const next = this.waiting.shift();
      if (!next) return;
      this.active.add(next);
      void this.send(next);
    }
  }

  private async send(outgoing: OutgoingBatch): Promise<void> {
    const { batch, id } = outgoing;
    const count = batch.messages.length;
    const bytes = this.overhead + batch.bytes;
    let attempts = 0;
    let outcome: SendOutcome | undefined;
    let failure: string | undefined;
    try {
      for (;;) {
        attempts += 1;
        const sentAt = new Date(this.clock.now()).toISOString();
        const body = batchBody(batch.messages, { library: LIBRARY, messageId: id, sentAt });
        if (this.debug) this.log(`analytics: sending batch ${id}: ${count} messages, ${bytes} bytes (attempt ${attempts})`);
        outcome = await this.transport.post(body);
        if (isSuccess(outcome) || !isRetryable(outcome) || attempts > this.maxRetries) break;
        const wait = retryDelayMs(attempts, this.random, outcome.kind === "status" ? outcome.retryAfterMs : undefined);
        if (this.debug) this.log(`analytics: batch ${id} failed (${describeOutcome(outcome)}); retrying in ${wait} ms`);
        await sleep(this.clock, wait);
      }
    } catch (error) {
      // Not expected (the transport never rejects), but a batch must still finish.
      failure = describeError(error);
    }
    try {
      this.finish(outgoing, count, bytes, attempts, outcome, failure);
    } catch (error) {
      this.log(`analytics: internal error while finishing batch ${id}: ${describeError(error)}`);
    } finally {
      // Whatever happened above, flush() waiters are released and the next batch may start.
      this.active.delete(outgoing);
      outgoing.resolve();
      this.pump();
    }
  }

  private finish(
    outgoing: OutgoingBatch,
    count: number,
    bytes: number,
    attempts: number,
    outcome: SendOutcome | undefined,
    failure: string | undefined,
  ): void {
    const { batch, id } = outgoing;
    this.counters.queued -= count;
    this.counters.queuedBytes -= batch.bytes - (count - 1);
    const delivered = failure === undefined && outcome !== undefined && isSuccess(outcome);
    if (delivered) {
      this.counters.delivered += count;
      const status = outcome.kind === "status" ? outcome.status : 0;
      if (this.debug) this.log(`analytics: delivered batch ${id}: ${count} messages, HTTP ${status} after ${attempts} attempt(s)`);
      for (const message of batch.messages) if (message.callback) this.callSafely(message.callback);
      if (this.listenerCount("flush") > 0) {
        const event: FlushEvent = { batchId: id, messageIds: batch.messages.map((m) => m.messageId), bytes, attempts, status };
        try {
          this.emit("flush", event);
        } catch (error) {
          this.log(`analytics: a 'flush' listener threw: ${describeError(error)}`);
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
      if (this.debug) this.log(`analytics: ${error.message}`);
      for (const message of batch.messages) if (message.callback) this.callSafely(message.callback, error);
      this.emitError(error);
    }
    if (this.full && this.counters.queued < this.maxQueueSize && this.counters.queuedBytes < this.maxQueueBytes) {
      this.full = false;
      if (this.debug) this.log(`analytics: queue has room again (${this.counters.dropped} dropped so far)`);
    }
  }

  private emitError(error: Error): void {
    // An 'error' event nobody listens for would throw: log it instead.
    if (this.listenerCount("error") === 0) {
      this.log(`analytics: ${error.message}`);
      return;
    }
    try {
      this.emit("error", error);
    } catch (thrown) {
      this.log(`analytics: an 'error' listener threw: ${describeError(thrown)}`);
    }
  }

  private callSafely(callback: Callback, error?: Error): void {
    try {
      if (error) callback(error);
      else callback();
    } catch (thrown) {
      this.log(`analytics: a callback threw: ${describeError(thrown)}`);
    }
  }

  /**
   * Keeps the process alive while someone awaits flush()/close(): the flush and
   * retry timers are unref'd, and an awaited promise alone does not hold the loop.
   */
  private hold<T>(promise: Promise<T>): Promise<T> {
    return promise.finally(holdProcess());
  }

  private async shutdown(): Promise<void> {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
    try {
      await this.flush();
      await this.hold(this.transport.close());
    } catch (error) {
      this.log(`analytics: close failed: ${describeError(error)}`);
    }
    if (this.debug) this.log("analytics: closed");
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function nonNegativeInteger(key: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${key} must be a whole number ≥ 0, got ${String(value)}`, { key });
  return value;
}

function positiveInteger(key: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`${key} must be a whole number ≥ 1, got ${String(value)}`, { key });
  return value;
}

function positiveNumber(key: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new ConfigError(`${key} must be a number > 0 and at most ${MAX_TIMER_MS} (milliseconds), got ${String(value)}`, { key });
  }
  return value;
}
