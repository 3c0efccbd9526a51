import type { HttpMethod, Target } from "../config/destination.js";
import type { SignatureRule } from "../delivery/actions-request.js";
import type { DeliveryEngine } from "../delivery/deliver.js";
import type { AttemptEvent, DeliveryResult } from "../delivery/types.js";
import type { Clock } from "../util/clock.js";

/** What the dispatcher takes and tells (dispatcher.ts runs it). */

/** One message to deliver. */
export interface DispatchEntry {
  /** Its position in the source (1-based line or sequence number), for the resume line. */
  line: number;
  /** Messages with the same key are delivered one at a time, in source order (per-user order). */
  orderKey: string | undefined;
  /** The exact bytes to send. */
  body: string | Uint8Array;
  /** Recorded epoch ms, for `speed`. */
  time: number | undefined;
  /** When resuming a delivery (serve after restart): its first attempt's epoch ms. */
  firstAttemptAt?: number | undefined;
  /** The body is exactly `JSON.stringify` of the message: Webhooks (Actions) sends it as it is for the whole-message mapping. */
  canonical?: boolean | undefined;
  /** A recorded request, sent again as it was: its method and signature rule; never mapped nor batched. */
  recorded?: { method: HttpMethod; rule: SignatureRule } | undefined;
  /** The message's own `messageId`: a scheme's message id is derived from it, so a re-send keeps it (docs/schemes.md#timestamps). */
  messageId?: string | undefined;
  /** The id header it was recorded with (`webhook-id`, `X-GitHub-Delivery`, …): sent again as it is. */
  recordedId?: string | undefined;
  /** The message's type: the event header of a scheme that sends one (GitHub's X-GitHub-Event). */
  type?: string | undefined;
}

/** Per-message hooks: each names its message, so nothing maps bodies back to messages. */
export interface MessageHooks<E extends DispatchEntry> {
  /** The message's delivery starts. */
  onStart?: ((entry: E) => void) | undefined;
  /** After each attempt of the message. */
  onAttempt?: ((entry: E, event: AttemptEvent) => void) | undefined;
  /** The message finished: delivered, given up, or interrupted while in flight. */
  onResult?: ((entry: E, result: DeliveryResult, ms: number) => void) | undefined;
  /** Admitted but never started (the run was stopped); called after the messages in flight finished, in line order. */
  onUnstarted?: ((entry: E) => void) | undefined;
  /** Keep response headers and bodies in the attempt events (only a reporter that shows them asks). */
  keepResponse?: boolean | undefined;
  /** Keep each URL's final answer in the result (replay --results/--compare). */
  captureResponse?: boolean | undefined;
}

export interface DispatchOptions<E extends DispatchEntry> {
  /** Batches (a streaming reader) or a plain list of messages. */
  source: AsyncIterable<readonly E[]> | Iterable<E>;
  /** `deliverContent` is needed with `batching`; `deliverBatch` with a destination function's batches. */
  engine: Pick<DeliveryEngine, "deliver"> & Partial<Pick<DeliveryEngine, "deliverContent" | "deliverBatch">>;
  concurrency: number;
  /** Starts per second. */
  rate?: number | undefined;
  /** Keep the recorded spacing, this many times faster. */
  speed?: number | undefined;
  clock?: Clock | undefined;
  /** Stops the run: retry waits end, admitted messages not started are handed to onUnstarted. */
  signal?: AbortSignal | undefined;
  hooks?: MessageHooks<E>;
  /**
   * Messages that finally failed are recorded elsewhere (a dead-letter file), so they count as
   * done for the resume line. Interrupted and unstarted messages are never done.
   */
  recordsFailed?: boolean;
  /** The line to resume from when nothing was read (the run's first line). Default 1. */
  startLine?: number;
  /**
   * Webhooks (Actions) with batches (docs/actions.md#batches): each target's own requests, of up to
   * its `batchSize` events; `waitMs` sends a batch that is not full once its first event waited
   * that long (serve). Without it, the engine's `deliver` takes each message to every target.
   */
  batching?: { targets: readonly Target[]; waitMs?: number | undefined } | undefined;
  /** A stop cuts the attempts in flight too (serve: they stay queued for the next run). */
  cutAttempts?: boolean;
}

/** Live counts for a status line. */
export interface DispatchProgress {
  /** Deliveries started. */
  sent: number;
  delivered: number;
  /** Skipped by a destination function (no handler, or `EventNotSupported`): done, and no failure. */
  skipped: number;
  /** Given up (not interrupted). */
  failed: number;
  /** In flight and waiting for another attempt. */
  retrying: number;
  /** Epoch ms of the next attempt of the oldest message waiting to retry, if any. */
  oldestNextAttemptAt: number | undefined;
}

export interface DispatchSummary {
  sent: number;
  delivered: number;
  /** Skipped by a destination function: done, and no failure. */
  skipped: number;
  failed: number;
  /** In flight when the run stopped: not delivered, not given up. */
  interrupted: number;
  /** Admitted and never started because the run stopped. */
  unstarted: number;
  /** Messages that took more than one round (interrupted ones included). */
  retried: number;
  /** The signal stopped the run. */
  stopped: boolean;
  /**
   * Set when stopped: the low-water mark, the lowest line neither delivered nor recorded as
   * failed (docs/recording.md#resume). Resuming there may repeat, never skip.
   */
  resumeLine: number | undefined;
  /** Lines after `resumeLine` already delivered (they will be sent again). */
  deliveredAfterResume: number;
  /** Set by `runToEnd` when the source or a hook threw: the run stopped as if interrupted. */
  error?: { value: unknown };
}

/** A message as the scheduler holds it: with its 0-based position in the source. */
export interface Slot<E extends DispatchEntry> {
  entry: E;
  index: number;
  orderKey: string | undefined;
  time: number | undefined;
  /** Epoch ms of the next attempt while waiting to retry. */
  nextAttemptAt: number | undefined;
}
