import type { Clock } from "../util/clock.js";
import type { ScriptedAnswers } from "./scripted-answers.js";
import type { ConnectionLimits } from "../http/limits.js";
import type { AnswerPlan } from "./answer-plan.js";
import type { ForwardRequest, ForwardResult } from "./forward.js";
import type { RecordingSink } from "./record-batcher.js";
import type { RequestHeaders, RequestVerdict } from "./verdict.js";

/* What a receiver takes, what it tells of each request, and what it gives back (server.ts builds it). */

export interface ReceivedRequest {
  /** 1-based, in arrival order of complete requests. */
  index: number;
  receivedAt: Date;
  /** POST, PUT or PATCH; any other for a request refused with 405. */
  method: string;
  path: string;
  headers: RequestHeaders;
  verdict: RequestVerdict;
  /** The status answered (or about to be), or null for `timeout` and `drop`. */
  status: number | null;
  /** An injected hold or dropped connection. */
  fault: "timeout" | "drop" | null;
  /** The status came from a fault flag rather than the signature rule. */
  injected: boolean;
  /** The exact body bytes received (empty for a 413). */
  raw: Buffer;
  /** With `forward`: the app's answer (or the 502/504 given for it); otherwise null. */
  forwarded: ForwardResult | null;
  /** The index of the --responses rule that answered, or null. */
  rule: number | null;
}

export interface ReceiverOptions extends ConnectionLimits {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  secret?: string | undefined;
  strict?: boolean;
  answerPlan?: AnswerPlan;
  /**
   * Scripted answers (docs/receiver.md#scripted-answers): for a request the answer plan leaves to
   * the signature rule and whose signature did not fail, the first matching rule answers (even
   * when forwarding), else --respond with the plan's headers and body (not when forwarding).
   */
  scriptedAnswers?: ScriptedAnswers;
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Gets the lines of one or more requests (docs/recording.md#recording-line) in one call, before their answers are sent; a throw (disk full) answers 507. */
  recording?: RecordingSink;
  maxBodyBytes?: number;
  /** Bodies buffered at once across connections; past it, 503 (default 32 MiB). */
  bodyBudgetBytes?: number;
  clock?: Clock;
  /**
   * Called once per POST, PUT or PATCH, and per request refused unread (405 for another method but the health
   * check, 400 for a request-target that is not a path, 413), before its answer is sent; when
   * forwarding, once the app has answered.
   */
  onRequest?: (request: ReceivedRequest) => void;
  /**
   * Answers the requests the fault flags leave alone (not injected, held or
   * dropped) in place of --respond and the signature rule: listen --forward-to.
   * The request is recorded and reported with the result, then answered with it.
   */
  forward?: (request: ForwardRequest) => Promise<ForwardResult>;
  /**
   * Routing (listen --forward-to TYPE=URL): the relay for each request by its verdict, in place of
   * `forward`; undefined answers the request as without forwarding (docs/receiver.md#routing).
   */
  route?: (verdict: RequestVerdict) => ((request: ForwardRequest) => Promise<ForwardResult>) | undefined;
  /** A request could not be handled (answered 500) or recorded (answered 507). */
  onError?: (error: Error) => void;
  /** When given, `GET`/`HEAD /health` answers 200 with this JSON (the receiver's counts). */
  health?: () => Record<string, unknown>;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  port: number;
  /**
   * Stops accepting and answers what is in flight at once: relays are interrupted (503), --delay
   * answers sent, `timeout` holds cut; then closes every connection.
   */
  close(): Promise<void>;
  /**
   * Refuses new requests (503) and resolves once the answers in flight have gone out on their own
   * time (held by --delay, waiting for the app); close() afterwards. listen's --count stops this way.
   */
  finish(): Promise<void>;
}

/** After a stop, how long connections still busy (an upload, a sender not reading its answer) are waited for. */
