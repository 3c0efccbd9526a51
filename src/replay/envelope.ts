import type { HttpMethod } from "../config/destination.js";
import type { SignatureRule } from "../delivery/actions-request.js";
import { userIdOf } from "../messages/check.js";
import { checkShape } from "../messages/check-fast.js";
import { isRecordedRequest } from "../messages/recorded-request.js";
import type { Failure } from "../delivery/failure.js";
import type { MessageType } from "../messages/schemas.js";
import { ACTIONS_USER_AGENT } from "../config/destination.js";
import { isPlainObject, parseUntrustedJson } from "../json/parse.js";
import { redactText, type Secrets } from "../safe-text/redact.js";
import { recordedMessageId } from "../signing/message-ids.js";

/**
 * What one input line means for replay (docs/recording.md#replay-input): a recording envelope
 * from `listen --record`, a dead-letter line (an envelope plus `failure`), or a
 * bare message. Pure: no I/O.
 */
export interface ReplayEntry {
  line: number;
  /** The exact bytes to send: `rawBody` when recorded, else `JSON.stringify(body)`. */
  body: string | Buffer;
  /** Undefined only under `raw`, for a body that is not a known message. */
  type: MessageType | undefined;
  /** Messages with the same key are delivered in file order. */
  orderKey: string | undefined;
  /** The message's `messageId` (--message-id, results lines). */
  messageId: string | undefined;
  /** A track's event name (results lines, compare labels). */
  event: string | undefined;
  /** Recorded time in epoch ms (`receivedAt`, else the body's `timestamp`), for --speed. */
  time: number | undefined;
  /** The line itself, kept so a dead-letter envelope can be built only when needed. */
  text: string;
  /** `body` is exactly `JSON.stringify` of the message (Webhooks (Actions) then sends it as it is). */
  canonical?: boolean | undefined;
  /** A recorded Webhooks (Actions) request, sent again as it was (docs/actions.md#replaying-recorded-requests). */
  recorded?: { method: HttpMethod; rule: SignatureRule } | undefined;
  /** The id header the recorded request carried (`webhook-id`, `svix-id`, `X-GitHub-Delivery`, `X-Shopify-Webhook-Id`): a replay keeps it. */
  recordedId?: string | undefined;
}

/** `warning`: under `raw`, why the line would have been bad (it is sent anyway). */
export type EntryResult = { ok: true; entry: ReplayEntry; warning?: string } | { ok: false; reason: string };

/**
 * The validation pass's answer: only what it needs (no body bytes are built). `canonical`: a bare
 * message whose line is exactly JSON.stringify of it, so the sending pass may send the line as read
 * and take its type and user from scanMessage (scan.ts) instead of parsing it again.
 */
export type LineCheck =
  | { ok: true; type: MessageType | undefined; orderKey: string | undefined; messageId: string | undefined; canonical: boolean; warning?: string }
  | { ok: false; reason: string };

/**
 * Validates a line as the first pass does: JSON, an envelope or a message,
 * and a known message by checkMessage. Under `raw` (replay --raw) a bad line
 * is a warning, not a failure, and no line counts as canonical; nor without
 * `markCanonical` (a dry run sends nothing, so it skips the JSON.stringify).
 */
export function checkLine(text: string, line: number, raw = false, markCanonical = true): LineCheck {
  const mark = markCanonical && !raw;
  const result = parseEntry(text, line, true, { body: mark ? "bare" : false, time: false }, raw);
  if (!result.ok) return result;
  const { type, orderKey, messageId } = result.entry;
  // bareBody hands back the line itself when JSON.stringify gives the same text; an envelope's body is not built.
  const canonical = mark && result.entry.body === text;
  return { ok: true, type, orderKey, messageId, canonical, ...(result.warning !== undefined ? { warning: result.warning } : {}) };
}

export type { Failure } from "../delivery/failure.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What parseEntry builds besides the type and order key; the sending pass leaves out what it will not use. */
export interface EntryParts {
  /** The body bytes (default true); without them `body` is "". `"bare"`: only a bare message's (all the canonical check needs). */
  body?: boolean | "bare";
  /** The recorded time, for --speed (default true); without it `time` is undefined. A bad `receivedAt` is still refused with `check`. */
  time?: boolean;
}

/**
 * Turns a line into the entry to send. With `check`, the message is validated
 * (checkMessage errors make the line bad); without it, only what is needed to
 * send is read, for the second pass over an already validated file.
 */
export function parseEntry(text: string, line: number, check: boolean, parts: EntryParts = {}, raw = false): EntryResult {
  const result = parseChecked(text, line, check, parts);
  if (result.ok || !raw) return result;
  return { ok: true, entry: rawEntry(text, line), warning: result.reason };
}

/** replay --raw: what is not a known message goes out as read, the recorded bytes when there are any. */
export function rawEntry(text: string, line: number): ReplayEntry {
  return { line, body: rawBodyOf(text), type: undefined, orderKey: undefined, messageId: undefined, event: undefined, time: undefined, text };
}

/** What replay --raw sends for a line that is not a known message: an envelope's recorded bytes or body, else the line as read. */
function rawBodyOf(text: string): string | Buffer {
  // Not a JSON object, or too deep to look inside safely (serializing its body would overflow the stack): the line as read.
  const envelope = jsonObjectOrUndefined(text);
  if (!isRecordedRequest(envelope)) return text;
  const rawBody = envelope["rawBody"];
  if (typeof rawBody === "string" && rawBody.length % 4 === 0 && BASE64.test(rawBody)) return Buffer.from(rawBody, "base64");
  return JSON.stringify(envelope["body"]);
}

function parseChecked(text: string, line: number, check: boolean, parts: EntryParts): EntryResult {
  const withBody = parts.body !== false;
  const withTime = parts.time !== false;
  let value: unknown;
  try {
    value = parseUntrustedJson(text);
  } catch (error) {
    return { ok: false, reason: `not JSON: ${(error as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      reason: `not a known message: expected a JSON object, got ${Array.isArray(value) ? "an array" : String(value === null ? "null" : typeof value)}`,
    };
  }
  const record = value as Record<string, unknown>;
  if (isRecordedRequest(record)) return fromEnvelope(record, text, line, check, withBody && parts.body !== "bare", withTime);
  return fromMessage(record, withBody ? bareBody(record, text) : "", undefined, text, line, check, withTime);
}

/**
 * A bare message's bytes: JSON.stringify of it. Usually that is the line itself (written by
 * JSON.stringify); then the line's string is used, so an entry waiting to be sent holds one
 * copy of the text, not two.
 */
function bareBody(message: Record<string, unknown>, text: string): string {
  const body = JSON.stringify(message);
  return body === text ? text : body;
}

function fromEnvelope(envelope: Record<string, unknown>, text: string, line: number, check: boolean, withBody: boolean, withTime: boolean): EntryResult {
  const rawBody = envelope["rawBody"];
  let bytes: Buffer | undefined;
  if (rawBody !== undefined) {
    if (typeof rawBody !== "string" || rawBody.length % 4 !== 0 || !BASE64.test(rawBody)) {
      return { ok: false, reason: `key "rawBody": expected base64 text` };
    }
    bytes = Buffer.from(rawBody, "base64");
  }
  let message = envelope["body"];
  const recorded = recordedRequestOf(envelope, message);
  if (recorded !== undefined) return fromRecordedRequest(recorded, message, bytes, envelope, text, line, withTime);
  if ((message === null || message === undefined) && bytes !== undefined) {
    // The recorded body was not JSON-parsable by listen, or was left out: the raw bytes decide.
    try {
      message = parseUntrustedJson(bytes.toString("utf8"));
    } catch (error) {
      return { ok: false, reason: `not a known message: the recorded body (rawBody) is not JSON: ${(error as Error).message}` };
    }
  }
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return { ok: false, reason: `not a known message: key "body" is not a JSON object` };
  }
  let time: number | undefined;
  const receivedAt = envelope["receivedAt"];
  if (typeof receivedAt === "string" && (withTime || check)) {
    const parsed = Date.parse(receivedAt);
    if (Number.isNaN(parsed)) {
      if (check) return { ok: false, reason: `key "receivedAt": not an ISO 8601 date` };
    } else if (withTime) time = parsed;
  }
  const record = message as Record<string, unknown>;
  const result = fromMessage(record, bytes ?? (withBody ? JSON.stringify(record) : ""), time, text, line, check, withTime, bytes === undefined);
  const recordedId = recordedMessageId(envelope["headers"]);
  if (result.ok && recordedId !== undefined) result.entry.recordedId = recordedId;
  return result;
}

/**
 * A recorded Webhooks (Actions) request (docs/actions.md#replaying-recorded-requests): a line
 * from listen (it has `method`) for a PUT or PATCH, a batch (an array body), or a request the
 * destination made (its User-Agent) whose body is not a message (a mapped payload, no data).
 * It is sent again as it was, signed by the rule it was recorded under.
 */
function recordedRequestOf(envelope: Record<string, unknown>, body: unknown): { method: HttpMethod; rule: SignatureRule } | undefined {
  const method = typeof envelope["method"] === "string" ? envelope["method"].toUpperCase() : undefined;
  if (method !== "POST" && method !== "PUT" && method !== "PATCH") return undefined;
  const headers = envelope["headers"];
  const userAgent = isPlainObject(headers) ? headers["user-agent"] : undefined;
  const message = isPlainObject(body) && typeof body["type"] === "string";
  if (method === "POST" && !Array.isArray(body) && !(userAgent === ACTIONS_USER_AGENT && !message)) return undefined;
  const rule: SignatureRule = envelope["signatureRule"] === "body" || !Array.isArray(body) ? "body" : "first-element";
  return { method, rule };
}

function fromRecordedRequest(
  recorded: { method: HttpMethod; rule: SignatureRule },
  body: unknown,
  bytes: Buffer | undefined,
  envelope: Record<string, unknown>,
  text: string,
  line: number,
  withTime: boolean,
): EntryResult {
  const sent = bytes ?? (body === null || body === undefined ? "" : JSON.stringify(body));
  const first = Array.isArray(body) ? body.find(isPlainObject) : body;
  const message = isPlainObject(first) ? first : undefined;
  const type = isPlainObject(body) && typeof body["type"] === "string" ? (body["type"] as MessageType) : undefined;
  const receivedAt = envelope["receivedAt"];
  const parsed = withTime && typeof receivedAt === "string" ? Date.parse(receivedAt) : Number.NaN;
  const messageId = isPlainObject(body) && typeof body["messageId"] === "string" ? body["messageId"] : undefined;
  const entry: ReplayEntry = {
    line,
    body: sent,
    type,
    orderKey: message ? userIdOf(message) : undefined,
    messageId,
    event: undefined,
    time: Number.isNaN(parsed) ? undefined : parsed,
    text,
    canonical: false,
    recorded,
    recordedId: recordedMessageId(envelope["headers"]),
  };
  return { ok: true, entry };
}

function fromMessage(
  message: Record<string, unknown>,
  body: string | Buffer,
  recordedAt: number | undefined,
  text: string,
  line: number,
  check: boolean,
  withTime: boolean,
  canonical = true,
): EntryResult {
  if (check) {
    // checkMessage's answers, without zod for a plainly valid message (the validation pass runs it per line).
    const result = checkShape(message, false);
    if (result.errors.length > 0) {
      return { ok: false, reason: `not a known message: ${result.errors.map((e) => e.message).join("; ")}` };
    }
  }
  const type = message["type"] as MessageType;
  let time = recordedAt;
  if (withTime && time === undefined && typeof message["timestamp"] === "string") {
    const parsed = Date.parse(message["timestamp"]);
    if (!Number.isNaN(parsed)) time = parsed;
  }
  const messageId = typeof message["messageId"] === "string" ? message["messageId"] : undefined;
  const event = type === "track" && typeof message["event"] === "string" ? message["event"] : undefined;
  return { ok: true, entry: { line, body, type, orderKey: userIdOf(message), messageId, event, time, text, canonical } };
}

/**
 * The dead-letter line for an input line: its envelope (a bare message gets
 * one) plus `failure`. A previous `failure` is replaced, so a dead-letter file
 * can be replayed and dead-lettered again.
 */
export function deadLetterLine(text: string, failure: Failure, secret?: Secrets, sent: string | Buffer = text): string {
  const failed = { reason: redactText(failure.reason, secret), attempts: failure.attempts, status: failure.status };
  const value = jsonObjectOrUndefined(text);
  // replay --raw sent a line that is no JSON object (or nests too deep): its bytes, which --raw sends again.
  if (value === undefined) return JSON.stringify({ body: null, rawBody: Buffer.from(sent).toString("base64"), failure: failed });
  const isEnvelope = !Object.hasOwn(value, "type") && Object.hasOwn(value, "body");
  const envelope: Record<string, unknown> = isEnvelope ? { ...value } : { body: value };
  delete envelope["failure"];
  envelope["failure"] = failed;
  return JSON.stringify(envelope);
}

function jsonObjectOrUndefined(text: string): Record<string, unknown> | undefined {
  try {
    const value = parseUntrustedJson(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
