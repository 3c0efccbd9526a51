import type { Clock, Random } from "../util/clock.js";

/**
 * Public types of the client library (docs/serve-api.md#client-library): the five call types in
 * camelCase, the client's options and the events it emits.
 */

/** Destination selection (docs/serve-api.md#routing): `All`, or a destination name, to a boolean or a settings object. */
export type Integrations = Record<string, boolean | Record<string, unknown>>;

/** Fields every call accepts. */
export interface CommonFields {
  /** Free-form context that is not an attribute of the user (device, ip, locale, ...). */
  context?: Record<string, unknown>;
  integrations?: Integrations;
  /** When the call happened (historical import). Default: now. A `Date` is sent as ISO 8601 UTC. */
  timestamp?: Date | string;
  /** Unique id of the call; a UUID is generated when absent. */
  messageId?: string;
}

/** Who the call is about: `userId`, `anonymousId`, or both. A number is sent as its string. */
export interface Identity {
  userId?: string | number;
  anonymousId?: string | number;
}

export interface IdentifyCall extends CommonFields, Identity {
  traits?: Record<string, unknown>;
}

export interface TrackCall extends CommonFields, Identity {
  /** Name of the tracked event. Required. */
  event: string;
  properties?: Record<string, unknown>;
}

export interface PageCall extends CommonFields, Identity {
  name?: string;
  category?: string;
  /** Page properties (docs/messages.md#message-types): recognized keys `url`, `title`, `referrer`, `path`; custom keys allowed. */
  properties?: Record<string, unknown>;
}

export interface ScreenCall extends CommonFields, Identity {
  /** The screen's name, e.g. "Home". */
  name?: string;
  category?: string;
  properties?: Record<string, unknown>;
}

export interface GroupCall extends CommonFields, Identity {
  /** The company, organization, account, project or team. Required. */
  groupId: string | number;
  traits?: Record<string, unknown>;
}

export interface AliasCall extends CommonFields {
  /** The new id. Required. */
  userId: string | number;
  /** The id to alias from. Required. */
  previousId: string | number;
}

export type { CallType } from "../messages/schemas.js";

/** Runs once per call: with no argument when its message was delivered, with the error when it finally failed. */
export type Callback = (error?: Error) => void;

export interface AnalyticsOptions {
  /** Base URL of the collection API; batches go to `{endpoint}/v1/batch`. Default `https://api.segment.io`. */
  endpoint?: string;
  /** Messages per batch: a batch is sent as soon as this many are queued. Default 20; 1 sends each alone. */
  flushAt?: number;
  /** Milliseconds since the last flush after which queued messages are sent anyway. Default 5000. */
  flushAfter?: number;
  /** Deadline of one request (connect to full response), in ms. Default 10000. */
  timeout?: number;
  /** Retries of a batch after the first attempt (network errors, 5xx, 429). Default 3. */
  maxRetries?: number;
  /** Messages held in memory at most (waiting and in flight); further calls are dropped. Default 10000. */
  maxQueueSize?: number;
  /** Bytes of message JSON held in memory at most; further calls are dropped. Default 32 MiB. */
  maxQueueBytes?: number;
  /** Batch requests in flight at once. Default 4. */
  concurrency?: number;
  /** Time source for flushAfter and retry waits (tests pass a VirtualClock). Default: system clock, timers unref'd. */
  clock?: Clock;
  /** Randomness for backoff jitter. Default Math.random. */
  random?: Random;
  /** Log queueing, flushes and failures. Default: true when `DEBUG` names `analytics` (read once, when the package loads). */
  debug?: boolean;
  /** Where log lines go (debug lines and errors nobody listens for). Default: stderr. */
  log?: (line: string) => void;
}

/** Payload of the `flush` event: one batch delivered. */
export interface FlushEvent {
  /** The batch request's own messageId. */
  batchId: string;
  /** `messageId`s of the messages it carried, in order. */
  messageIds: string[];
  /** Request body size in bytes. */
  bytes: number;
  attempts: number;
  status: number;
}

export interface AnalyticsEvents {
  flush: [event: FlushEvent];
  error: [error: Error];
}

/** Counters for monitoring (and the benchmark). */
export interface AnalyticsStats {
  /** Messages accepted and not yet delivered or failed (waiting and in flight). */
  queued: number;
  /** Bytes of message JSON among `queued`. */
  queuedBytes: number;
  /** Batch requests in flight (including those waiting to retry). */
  inFlight: number;
  delivered: number;
  failed: number;
  /** Calls refused because the queue was full. */
  dropped: number;
}
