import type { CapturedResponse } from "./captured-body.js";
import type { InvocationRecord } from "../functions/types.js";
import type { AttemptOutcome, PreparedRequest } from "./types.js";

/**
 * What the engine needs from the network: one attempt at a time, each with its own deadline,
 * never rejecting. The undici adapter serves production; tests pass a fake
 * (`webhook-cli/testing`) so the retry rules run without sockets. A transport is free in how it
 * delivers (HTTP with the request's method, or something that is not HTTP at all) as long as it
 * reports how each attempt ended in the outcomes the retry rules read.
 */
export interface DeliveryTransport {
  /** One attempt at `request`. Every failure is an outcome in the report, never a rejection. */
  send(request: PreparedRequest, options: SendOptions): Promise<AttemptReport>;
  /** Releases connections; waits for requests in flight. */
  close(): Promise<void>;
}

/** How one attempt is made. */
export interface SendOptions {
  /** Its deadline in ms, covering connect, TLS and the response's head (docs/delivery.md#timeout). */
  readonly timeoutMs: number;
  /** Keep the response's headers and the start of its body in the report's `response` (--verbose); otherwise only what the retry rules need is read. */
  readonly keepResponse?: boolean | undefined;
  /** Read the whole body into the report's `captured`: its content-type, and the body or its hash (replay --results). */
  readonly captureResponse?: boolean | undefined;
  /** Aborts the attempt: it then settles at once (the engine ignores that report). */
  readonly signal?: AbortSignal | undefined;
}

/** What one attempt produced: the outcome for the retry rules plus what --verbose shows. */
export interface AttemptReport {
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
  ms: number;
  response?: { headers: Record<string, string | string[]>; body: string };
  /** With `captureResponse`, when an answer arrived. */
  captured?: CapturedResponse;
  /**
   * A destination function's invocation.
   * @internal the command line's function transport sets it.
   */
  invocation?: InvocationRecord;
  /**
   * A batch (`request.items`): each event's own outcome, in order; without it, `outcome` is every event's.
   * @internal the command line's function batches.
   */
  items?: AttemptReport[];
}
