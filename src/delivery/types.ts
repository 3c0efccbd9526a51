import type { HttpMethod, Target } from "../config/destination.js";
import type { InvocationRecord } from "../functions/types.js";
import type { SignatureRule } from "./actions-request.js";
import type { CapturedResponse } from "./captured-body.js";
import { RETRY_RULES } from "./retry-rules.js";

/**
 * The one delivery engine's interface (docs/delivery.md). `send`, `replay`,
 * `serve` and `audience sync` all deliver through `DeliveryEngine.deliver`.
 */

// The destination's row of the retry rules (retry-rules.ts), under the names the engine uses.
export const DEFAULT_TIMEOUT_MS = RETRY_RULES.classic.timeoutMs;
export const DEFAULT_RETRY_WINDOW_MS = RETRY_RULES.classic.limit.windowMs;
/** The wait before retry n is capped at this (docs/delivery.md#retry-schedule). */
export const MAX_BACKOFF_MS = RETRY_RULES.classic.backoff.capMs;

/** The exact request the engine sends to one target (also what --dry-run prints). */
export interface PreparedRequest {
  url: string;
  /** POST; Webhooks (Actions) also PUT and PATCH. */
  method: HttpMethod;
  headers: Record<string, string>;
  /** Empty for a request without a body (a Webhooks (Actions) event without data). */
  body: Buffer;
  /** Redirects the transport follows (Webhooks (Actions): 20); absent or 0: a 3xx is the answer. */
  followRedirects?: number;
  /**
   * A batch of this many events, its body their JSON array: a function's `onBatch` answers each (docs/functions.md#batches).
   * @internal the command line's function batches.
   */
  items?: number;
}

/** How one attempt ended. `kind` drives the retry policy. */
export type AttemptOutcome =
  /** An answer; `retryAfterMs`: its Retry-After, whatever the status (the retry rules say on which statuses it counts). */
  | { kind: "status"; status: number; retryAfterMs?: number }
  | { kind: "timeout" }
  | { kind: "network"; code: string }
  | { kind: "tls"; code: string }
  | { kind: "invalid"; reason: string }
  /** A destination function has no handler for the event, or threw `EventNotSupported`: not retried, and no failure (docs/functions.md#errors). */
  | { kind: "skipped"; reason: string };

export interface AttemptEvent {
  url: string;
  /** 1-based attempt number for this URL. */
  attempt: number;
  outcome: AttemptOutcome;
  status: number | null;
  /** Human-readable error, or null for a 2xx. */
  error: string | null;
  ms: number;
  /** When another attempt follows, how long until it starts. */
  retryInMs?: number;
  request: PreparedRequest;
  response?: { headers: Record<string, string | string[]>; body: string };
  /**
   * A destination function's invocation: what it returned or threw, logged and fetched.
   * @internal the command line's function transport sets it.
   */
  invocation?: InvocationRecord;
}

export interface UrlResult {
  url: string;
  /** Last HTTP status seen, or null when none arrived. */
  status: number | null;
  attempts: number;
  /** Why the last attempt failed, or null when it succeeded. */
  error: string | null;
  /** Total time spent on this URL's attempts, in ms. */
  ms: number;
  /** The last attempt's answer, with `captureResponse` (replay --results/--compare). */
  response?: CapturedResponse;
  /**
   * A destination function's last invocation.
   * @internal the command line's function transport sets it.
   */
  invocation?: InvocationRecord;
  /** Why a destination function skipped the event (its last attempt's outcome). */
  skipped?: string;
}

export interface DeliveryResult {
  /**
   * Classic: at least one URL answered 2xx (any-of: docs/delivery.md#several-urls). Webhooks
   * (Actions): every URL did (each is its own subscription: docs/actions.md#several-urls).
   */
  delivered: boolean;
  urls: UrlResult[];
  /** Rounds run (1 = no retry). */
  rounds: number;
  /** Stopped early by the abort signal: not delivered, not finally failed. */
  interrupted: boolean;
  /**
   * Not delivered, and not failed either: every target is a destination function that skipped the
   * event (no handler, or `EventNotSupported`: docs/functions.md#errors). Nothing retries it.
   */
  skipped?: true;
}

export interface DeliverCall {
  /** Cancels pending retry waits; an attempt in flight finishes (bounded by the timeout) unless `cutAttempts`. */
  signal?: AbortSignal;
  /**
   * With `signal`: its abort cuts the attempts in flight too, and the message is interrupted (serve,
   * whose stop must not wait for a slow destination: the message stays queued for the next run).
   */
  cutAttempts?: boolean;
  /** Epoch ms of the first attempt, when resuming a delivery (serve after restart). */
  firstAttemptAt?: number;
  /**
   * What the message keeps across retries and re-sends under a scheme with an id header: the id it
   * was recorded with, its own `messageId` (the id is derived from it), its type (the event header).
   */
  identity?: {
    /** The id it was sent under before (a recorded `webhook-id`, …), kept when the scheme can carry it. */
    id?: string | undefined;
    /** Its own `messageId`: the id is derived from it. */
    seed?: string | undefined;
    /** The event header's value: its type. */
    event?: string | undefined;
  };
  /** Override the engine's targets for this message. */
  targets?: readonly Target[];
  /**
   * A recorded request sent again as it was (docs/recording.md#which-bytes-are-sent): the body
   * with this method, signed by this rule; no mapping applies.
   */
  recorded?: { method: HttpMethod; rule: SignatureRule };
  /** The body is exactly `JSON.stringify` of a message: Webhooks (Actions) sends it unparsed under the whole-message mapping. */
  canonical?: boolean;
  /** Called after each of this message's attempts (--verbose, spinners, logs, serve's retrying count). */
  onAttempt?: (event: AttemptEvent) => void;
  /** Keep each response's headers and the start of its body in the attempt events (--verbose only). */
  keepResponse?: boolean;
  /** Keep each URL's final answer (content-type, body up to 64 KiB else its SHA-256) in the result's `urls[].response`. */
  captureResponse?: boolean;
}
