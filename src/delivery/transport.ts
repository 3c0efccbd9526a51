import type { CapturedResponse } from "./captured-body.js";
import type { InvocationRecord } from "../functions/types.js";
import type { AttemptOutcome, PreparedRequest } from "./types.js";

/**
 * What the engine needs from the network: one POST with one deadline, never
 * rejecting. The undici adapter serves production; tests pass a fake
 * (`webhook-cli/testing`) so the retry rules run without sockets.
 */
export interface DeliveryTransport {
  /**
   * One attempt. Every failure is an outcome, never a rejection. `keepResponse`
   * asks for the response headers and the start of its body (--verbose); without
   * it only what the retry policy needs is read. `capture` asks for the
   * content-type and the whole body streamed into a BodyCapture (replay --results). `cut` aborts
   * the attempt: it then settles at once (the engine ignores that report).
   */
  post(request: PreparedRequest, timeoutMs: number, keepResponse: boolean, capture?: boolean, cut?: AbortSignal): Promise<AttemptReport>;
  /** Releases connections; waits for requests in flight. */
  close(): Promise<void>;
}

/** What one POST produced: the outcome for the policy plus what --verbose shows. */
export interface AttemptReport {
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
  ms: number;
  response?: { headers: Record<string, string | string[]>; body: string };
  /** With `capture`, when an answer arrived. */
  captured?: CapturedResponse;
  /** A destination function's invocation (the function transport). */
  invocation?: InvocationRecord;
  /** A batch (`request.items`): each event's own outcome, in order; without it, `outcome` is every event's. */
  items?: AttemptReport[];
}
