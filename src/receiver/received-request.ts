import type { IncomingMessage } from "node:http";
import type { AnswerDecision } from "./answer-decision.js";
import type { ForwardResult } from "./forward.js";
import type { RequestHeaders, RequestVerdict } from "./verdict.js";

/** What the receiver tells of each request (listen's lines, the history, the recording, JUnit). */
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

/** Where a request stands in the receiver: its number, when it came, how it is answered. */
export interface Arrival {
  index: number;
  receivedAt: Date;
  /** A relay's status is the app's: set once the app has answered (`forwarded`). */
  decision: AnswerDecision<unknown>;
}

/** The record of one request, judged or refused unread (then `raw` is empty). */
export function receivedRequest(req: IncomingMessage, raw: Buffer, verdict: RequestVerdict, { index, receivedAt, decision }: Arrival): ReceivedRequest {
  const own = decision.kind === "answer";
  return {
    index,
    receivedAt,
    method: req.method ?? "POST",
    path: req.url ?? "/",
    headers: req.headers,
    verdict,
    status: own ? decision.status : null,
    fault: decision.kind === "timeout" || decision.kind === "drop" ? decision.kind : null,
    injected: own ? decision.injected : decision.kind !== "relay",
    raw,
    forwarded: null,
    rule: own ? (decision.scripted?.rule ?? null) : null,
  };
}
