import type { CapturedResponse } from "../delivery/captured-body.js";
import type { InvocationRecord } from "../functions/types.js";
import { maskSecret, redactText, redactUrl, type Secrets } from "../safe-text/redact.js";

export { BodyCapture, MAX_KEPT_BODY_BYTES, contentTypeOf, keepBody, type CapturedResponse, type KeptBody } from "../delivery/captured-body.js";

/**
 * `replay --results FILE`: one NDJSON line per input message.
 * Pure: types, the body capture and the formatter; the file sink is in
 * results-file.ts, the in-order release in results-order.ts.
 *
 * A line, e.g.:
 * {"line":12,"messageId":"m-12","type":"track","event":"Order Completed","userId":"user-42","delivered":true,
 *  "urls":[{"url":"http://127.0.0.1:3000/hook","status":200,"attempts":1,"ms":3.42,"error":null,
 *           "contentType":"application/json","body":"{\"ok\":true}"}]}
 */

export interface ResultUrl {
  url: string;
  /** The final status, or null when no answer arrived (timeout, refused). */
  status: number | null;
  attempts: number;
  /** Time spent on this URL, all attempts included, in ms (two decimals). */
  ms: number;
  /** Why the last attempt failed, or null after a 2xx. */
  error: string | null;
  /** The final answer's `content-type`, or null (no answer, or none sent). */
  contentType: string | null;
  /** Present when an answer arrived: valid UTF-8 under 64 KiB. */
  body?: string;
  /** Present instead of `body` for larger or non-UTF-8 bodies. */
  bodySha256?: string;
  bodySize?: number;
  /** A destination function that skipped the event: why (docs/functions.md#as-a-destination). */
  skipped?: string;
  /** A destination function's last invocation: the handler called and every request it made. */
  function?: ResultFunction;
}

/** What a results line keeps of a destination function's invocation. */
export interface ResultFunction {
  handler: string | null;
  /** The service's name of how it ended, when it did not deliver: `Message Rejected`, `Retry`, … */
  errorType?: string;
  fetches: { method: string; url: string; status: number | null; ms: number; error?: string }[];
}

export interface ResultLine {
  /** The input line number (from 1, blank lines counted), the key for --compare. */
  line: number;
  messageId?: string;
  type: string;
  /** A track's event name, for the diff's label. */
  event?: string;
  /** The ordering key (userIdOf), or null. */
  userId: string | null;
  delivered: boolean;
  /** Every target is a destination function that skipped the event: done, and no failure. */
  skipped?: true;
  urls: ResultUrl[];
}

/** What a results line says about its message, read once from the message. */
export interface MessageFacts {
  type: string;
  userId: string | undefined;
  messageId: string | undefined;
  event: string | undefined;
}

/** One URL's delivery outcome: the engine's UrlResult, its final answer included (captured with `captureResponse`). */
export interface UrlOutcome {
  url: string;
  status: number | null;
  attempts: number;
  ms: number;
  error: string | null;
  response?: CapturedResponse | undefined;
  skipped?: string | undefined;
  invocation?: InvocationRecord | undefined;
}

export interface MessageOutcome {
  line: number;
  facts: MessageFacts;
  delivered: boolean;
  skipped?: boolean | undefined;
  urls: readonly UrlOutcome[];
}

/** The facts a results line and the selectors need, from a parsed message. */
export function messageFacts(message: Readonly<Record<string, unknown>>, userId: string | undefined): MessageFacts {
  const type = message["type"];
  const messageId = message["messageId"];
  const event = message["event"];
  return {
    type: typeof type === "string" ? type : "unknown",
    userId,
    messageId: typeof messageId === "string" ? messageId : undefined,
    event: type === "track" && typeof event === "string" ? event : undefined,
  };
}

/**
 * The results line of a message's outcome. With `redact` (what replay writes), each URL goes
 * through the one redaction (userinfo, credential-like query values, the secret) and any text of
 * the receiver's answer equal to the secret is masked (an echoing receiver must not put it in the
 * file): one pass over the engine's per-URL results, answers included.
 */
export function resultLine(outcome: MessageOutcome, redact?: { secret: Secrets }): ResultLine {
  const { facts } = outcome;
  const urls: ResultUrl[] = [];
  for (const url of outcome.urls) urls.push(resultUrl(url, redact));
  return {
    line: outcome.line,
    ...(facts.messageId !== undefined ? { messageId: facts.messageId } : {}),
    type: facts.type,
    ...(facts.event !== undefined ? { event: facts.event } : {}),
    userId: facts.userId ?? null,
    delivered: outcome.delivered,
    ...(outcome.skipped === true ? { skipped: true as const } : {}),
    urls,
  };
}

function resultUrl(url: UrlOutcome, redact: { secret: Secrets } | undefined): ResultUrl {
  // Field by field: the engine's object may carry more than a results line shows.
  const kept = url.response?.body;
  const body = redact !== undefined && kept !== undefined && "body" in kept ? { ...kept, body: maskSecret(kept.body, redact.secret) } : kept;
  return {
    url: redact !== undefined ? redactUrl(url.url, redact.secret) : url.url,
    status: url.status,
    attempts: url.attempts,
    ms: Math.round(url.ms * 100) / 100,
    error: redact !== undefined && url.error !== null ? redactText(url.error, redact.secret) : url.error,
    contentType: url.response?.contentType ?? null,
    ...(body ?? {}),
    ...(url.skipped !== undefined ? { skipped: url.skipped } : {}),
    ...(url.invocation !== undefined ? { function: resultFunction(url.invocation, redact) } : {}),
  };
}

/** The handler and the requests of a function's invocation, URLs through the one redaction. */
function resultFunction(record: InvocationRecord, redact: { secret: Secrets } | undefined): ResultFunction {
  const fetches = record.fetches.map(({ method, url, status, ms, error }) => ({
    method,
    url: redact !== undefined ? redactUrl(url, redact.secret) : url,
    status,
    ms,
    ...(error !== undefined ? { error } : {}),
  }));
  const errorType = record.outcome.kind === "delivered" ? undefined : record.outcome.errorType;
  return { handler: record.handler, ...(errorType !== undefined ? { errorType } : {}), fetches };
}

/** The NDJSON text of a results line, newline included. */
export function formatResultLine(line: ResultLine): string {
  // Bodies are kept as text, so this never walks a deeply nested answer.
  return `${JSON.stringify(line)}\n`;
}
