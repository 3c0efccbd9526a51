import type { HttpMethod, Target } from "../config/destination.js";
import { DEFAULT_MAPPING, resolveMapping, type Mapping } from "../messages/mapping.js";
import { firstElementBytes } from "../json/first-element.js";
import { parseUntrustedJson } from "../json/parse.js";

/**
 * What a Webhooks (Actions) request carries (docs/actions.md#the-request), built from events the
 * way the real destination builds it: each event's `data` by its mapping, `JSON.stringify`'d; a
 * batch is the array of them; X-Signature covers the body, or a batch's first element only. Pure.
 */

/** A request's content before its headers: method, body, and the bytes X-Signature covers. */
export interface RequestContent {
  method: HttpMethod;
  /** undefined: no body at all (an event without data): no Content-Type, no X-Signature. */
  body: Buffer | undefined;
  /** The bytes the signature is computed over (the body, or a batch's first element); undefined: unsigned. */
  signed: Buffer | undefined;
}

/** How a recorded request is signed again (docs/recording.md#which-bytes-are-sent). */
export type SignatureRule = "body" | "first-element";

/** One event as the builder takes it: its bytes, and whether they are exactly `JSON.stringify` of the parsed message. */
export interface ActionsEvent {
  body: string | Uint8Array;
  /** True when `body` is `JSON.stringify(message)`: the whole-message mapping then sends it as it is, unparsed. */
  canonical?: boolean | undefined;
}

/** Why an event is not sent: the real destination answers 400 for it and sends nothing. */
export type Refusal = string;

/** A single event's request, or why it is refused. */
export function singleRequest(target: Target, event: ActionsEvent): RequestContent | { refused: Refusal } {
  const mapping = target.mapping ?? DEFAULT_MAPPING;
  const method = target.method ?? "POST";
  // The whole message, already written by JSON.stringify: its bytes as they are (replay's usual case).
  if (event.canonical === true && isWholeMessage(mapping)) {
    const body =
      typeof event.body === "string" ? Buffer.from(event.body, "utf8") : Buffer.from(event.body.buffer, event.body.byteOffset, event.body.byteLength);
    return { method, body, signed: body };
  }
  const data = eventData(mapping, event);
  if (typeof data === "object") return data;
  if (data === NO_DATA) return { method, body: undefined, signed: undefined };
  const body = Buffer.from(data, "utf8");
  return { method, body, signed: body };
}

/** A batch's request (the array of each event's data), and which events were left out and why (by index). */
export function batchRequest(target: Target, events: readonly ActionsEvent[]): { content: RequestContent | undefined; refused: Map<number, Refusal> } {
  const mapping = target.mapping ?? DEFAULT_MAPPING;
  const refused = new Map<number, Refusal>();
  const parts: string[] = [];
  for (const [index, event] of events.entries()) {
    const data = eventData(mapping, event);
    if (typeof data === "object") refused.set(index, data.refused);
    else parts.push(data === NO_DATA ? "null" : data);
  }
  if (parts.length === 0) return { content: undefined, refused };
  const first = parts[0] as string;
  const body = Buffer.from(`[${parts.join(",")}]`, "utf8");
  // The real destination signs JSON.stringify(body[0]) only, and nothing when that is empty.
  const signed = first === "null" ? undefined : body.subarray(1, 1 + Buffer.byteLength(first, "utf8"));
  return { content: { method: target.method ?? "POST", body, signed }, refused };
}

/** A recorded request sent again as it was: its method, its bytes, signed by the rule it was recorded under. */
export function recordedRequest(method: HttpMethod, bytes: Buffer, rule: SignatureRule): RequestContent {
  if (bytes.length === 0) return { method, body: undefined, signed: undefined };
  if (rule === "body") return { method, body: bytes, signed: bytes };
  const span = firstElementBytes(bytes);
  const first = span === null ? undefined : bytes.subarray(span.start, span.end);
  // Element 0 null: the real destination sends no signature.
  const signed = first === undefined || (first.length === 4 && first.toString("latin1") === "null") ? undefined : first;
  return { method, body: bytes, signed };
}

const NO_DATA = 0;

function isWholeMessage(mapping: Mapping): boolean {
  return mapping.root.kind === "path" && mapping.root.keys.length === 0;
}

/** One event's `data` as JSON text, NO_DATA, or a refusal. */
function eventData(mapping: Mapping, event: ActionsEvent): string | typeof NO_DATA | { refused: Refusal } {
  // The whole message, already written by JSON.stringify: the bytes as they are (replay's usual case).
  if (event.canonical === true && isWholeMessage(mapping)) {
    return typeof event.body === "string" ? event.body : Buffer.from(event.body).toString("utf8");
  }
  let message: unknown;
  try {
    message = parseUntrustedJson(typeof event.body === "string" ? event.body : Buffer.from(event.body).toString("utf8"));
  } catch {
    return { refused: "not sent: the body is not JSON, and data must be an object" };
  }
  const data = resolveMapping(mapping, message);
  if (data.kind === "none") return NO_DATA;
  if (data.kind === "refused") return { refused: `not sent: ${data.reason} (the real destination answers 400 and sends nothing)` };
  return JSON.stringify(data.data);
}
