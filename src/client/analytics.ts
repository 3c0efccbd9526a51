import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { ClosedError, ValidationError } from "../errors.js";
import { LIBRARY } from "./library.js";
import { resolveOptions, type ClientSettings } from "./options.js";
import { Outbox } from "./outbox.js";
import { Transport } from "./transport.js";
import type {
  AliasCall,
  AnalyticsEvents,
  AnalyticsOptions,
  AnalyticsStats,
  Callback,
  CallType,
  GroupCall,
  IdentifyCall,
  PageCall,
  ScreenCall,
  TrackCall,
} from "./types.js";
import { checkMessageSize, validateCall, wireIds } from "./validate.js";

/**
 * The batching analytics client (docs/serve-api.md#client-library). Calls validate synchronously
 * and queue in memory; batches go out from the background by count, by
 * interval since the last flush, or before the 500 KB request limit. Delivery
 * problems never throw or reject: they reach callbacks and `error` events.
 * Every option has its default in one place (options.ts): logging goes to stderr, on under
 * `DEBUG=analytics`, unless `log`/`debug` say otherwise.
 */
export class Analytics extends EventEmitter<AnalyticsEvents> {
  private readonly settings: ClientSettings;
  private readonly outbox: Outbox;
  private closing: Promise<void> | undefined;
  private lastIsoAt = Number.NaN;
  private lastIso = "";

  constructor(writeKey: string, options: AnalyticsOptions = {}) {
    super();
    this.settings = resolveOptions(writeKey, options);
    const transport = new Transport({
      endpoint: this.settings.endpoint,
      writeKey,
      timeoutMs: this.settings.timeout,
      connections: this.settings.concurrency,
      userAgent: `${LIBRARY.name}/${LIBRARY.version}`,
      now: () => this.settings.clock.now(),
    });
    this.outbox = new Outbox(this.settings, transport, this);
  }

  // One method per call type, as analytics-node has them: each is public API with its own
  // message type and doc, so they stay written out rather than generated.

  /** Records who a user is and their traits. */
  identify(message: IdentifyCall, callback?: Callback): void {
    this.enqueue("identify", message, callback);
  }

  /** Records an action the user performed. */
  track(message: TrackCall, callback?: Callback): void {
    this.enqueue("track", message, callback);
  }

  /** Records a page view. */
  page(message: PageCall, callback?: Callback): void {
    this.enqueue("page", message, callback);
  }

  /** Records a mobile app screen view (the page of apps). */
  screen(message: ScreenCall, callback?: Callback): void {
    this.enqueue("screen", message, callback);
  }

  /** Associates a user with a group. */
  group(message: GroupCall, callback?: Callback): void {
    this.enqueue("group", message, callback);
  }

  /** Merges a previous identity into a new one. */
  alias(message: AliasCall, callback?: Callback): void {
    this.enqueue("alias", message, callback);
  }

  /** Sends everything queued so far; resolves when all of it is delivered or has finally failed. Never rejects. */
  flush(): Promise<void> {
    return this.outbox.flush();
  }

  /** Flushes, stops the timer and releases connections. Safe to call twice; calls afterwards throw. Never rejects. */
  close(): Promise<void> {
    this.closing ??= this.outbox.close();
    return this.closing;
  }

  /** Counters: queued (waiting and in flight), delivered, failed, dropped. */
  stats(): AnalyticsStats {
    return this.outbox.stats();
  }

  /** Checks a call and turns it into the message's JSON as sent: type, messageId, timestamp, ids as strings. */
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
    this.outbox.add(type, messageId, json, bytes, callback);
  }

  /** Now as ISO 8601; calls within the same millisecond share one string. */
  private isoNow(): string {
    const now = this.settings.clock.now();
    if (now !== this.lastIsoAt) {
      this.lastIsoAt = now;
      this.lastIso = new Date(now).toISOString();
    }
    return this.lastIso;
  }
}
