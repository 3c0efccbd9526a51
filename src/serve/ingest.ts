import { checkMessage } from "../messages/check.js";
import { MAX_BATCH_CALLS, MAX_MESSAGE_BYTES, MAX_REQUEST_BYTES } from "../messages/limits.js";
import { CALL_TYPES, normalizeTimestamp, type CallType } from "../messages/schemas.js";
import type { Source } from "../config/destination.js";
import { isPlainObject, parseUntrustedJson } from "../json/parse.js";

/**
 * The inbound collection API's request bodies (docs/serve-api.md#endpoints, docs/serve-api.md#call-validation), pure: raw bytes
 * and headers in, accepted calls or a 4xx verdict out. Shapes follow the
 * client libraries: ours and the public Segment-compatible ones (`batch`,
 * `writeKey`, `sentAt`, `messageId`, `context`, `integrations`).
 */

type Json = Record<string, unknown>;

/** One validated call as a client sent it (timestamps already normalized). */
export interface IngestCall {
  type: CallType;
  userId?: string;
  anonymousId?: string;
  event?: string;
  name?: string;
  category?: string;
  groupId?: string;
  previousId?: string;
  properties?: Json;
  traits?: Json;
  context?: Json;
  integrations?: Json;
  /** ISO 8601 UTC with milliseconds, when the call carried one. */
  timestamp?: string;
  /** When the client sent the request (the call's own, else the batch's), for clock-skew correction. */
  sentAt?: string;
  messageId?: string;
}

/** The error codes of the real Tracking API's error bodies (docs/serve-api.md#error-bodies). */
export type ErrorCode =
  | "invalid_request"
  | "request_too_large"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "unsupported_encoding"
  | "unavailable"
  /** A source function failed on the webhook (docs/serve-api.md#source-functions). */
  | "function_error";

/** A call dropped from a request: its index in the batch (0 for a single call) and why; `count` calls from there when more than one. */
export interface Rejection {
  index: number;
  reason: string;
  count?: number;
}

export type IngestResult = { ok: true; calls: IngestCall[]; rejected: Rejection[] } | { ok: false; status: 400; code: ErrorCode; error: string };

export type JsonBodyResult = { ok: true; body: Json } | { ok: false; status: 400; code: ErrorCode; error: string };

/** The real API's answer to a body over its limit (400, `request_too_large`). */
export const TOO_LARGE_MESSAGE = `request body is over the 500 KB limit (${MAX_REQUEST_BYTES} bytes)`;

/** Parses a request body: size limit first, then UTF-8 JSON, then an object at the top. */
export function parseJsonBody(raw: Buffer): JsonBodyResult {
  if (raw.length > MAX_REQUEST_BYTES) return { ok: false, status: 400, code: "request_too_large", error: TOO_LARGE_MESSAGE };
  if (raw.length === 0) return { ok: false, status: 400, code: "invalid_request", error: "request body is empty: expected a JSON object" };
  let value: unknown;
  try {
    value = parseUntrustedJson(raw.toString("utf8"));
  } catch (error) {
    return { ok: false, status: 400, code: "invalid_request", error: `request body is not valid JSON: ${(error as Error).message}` };
  }
  if (!isPlainObject(value)) return { ok: false, status: 400, code: "invalid_request", error: "request body must be a JSON object" };
  return { ok: true, body: value };
}

/** The write key from HTTP Basic auth (`writeKey:` base64), else from the body's `writeKey`. */
export function writeKeyOf(authorization: string | undefined, body: Json | undefined): string | undefined {
  if (authorization !== undefined) {
    const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization);
    if (match?.[1] !== undefined) {
      const decoded = Buffer.from(match[1], "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      const key = colon === -1 ? decoded : decoded.slice(0, colon);
      if (key !== "") return key;
    }
  }
  const fromBody = body?.["writeKey"];
  return typeof fromBody === "string" && fromBody !== "" ? fromBody : undefined;
}

/** The name of the source used when none is configured: every key maps to it. */
export const DEFAULT_SOURCE = "default";

/**
 * The source a write key belongs to, or undefined (→ 401). With no source
 * configured any key, even none, is accepted as the default source.
 */
export function authenticate(key: string | undefined, sources: readonly Source[]): string | undefined {
  if (sources.length === 0) return DEFAULT_SOURCE;
  if (key === undefined) return undefined;
  return sources.find((source) => source.writeKey === key)?.name;
}

/**
 * Validates the calls of one request one by one, as the real Tracking API
 * does: valid calls are kept, invalid ones come back as rejections with their
 * index (the caller decides whether one rejection refuses the request:
 * `serve --strict`). Batch-level `context` and `integrations` are merged
 * under each call's own (the call's keys win); the batch's `sentAt` applies
 * to calls without their own.
 */
export function parseCalls(route: { kind: "batch" } | { kind: "single"; type: CallType }, body: Json): IngestResult {
  if (route.kind === "single") {
    const call = parseCall({ ...body, type: body["type"] ?? route.type }, {});
    if (call instanceof TooLarge) return tooLarge(call.message);
    const mismatch = typeof call !== "string" && call.type !== route.type ? `"type" is "${call.type}" but the path is /v1/${route.type}` : undefined;
    const reason = typeof call === "string" ? call : mismatch;
    return reason === undefined ? { ok: true, calls: [call as IngestCall], rejected: [] } : { ok: true, calls: [], rejected: [{ index: 0, reason }] };
  }
  const batch = body["batch"];
  if (!Array.isArray(batch)) return invalid(`"batch" must be an array of calls`);
  const shared: Shared = {};
  for (const key of ["context", "integrations"] as const) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (!isPlainObject(value)) return invalid(`"${key}" must be an object`);
    shared[key] = value;
  }
  const sentAt = body["sentAt"];
  if (sentAt !== undefined && sentAt !== null) {
    const normalized = normalizeTimestamp(sentAt);
    if (normalized === undefined) return invalid(`"sentAt" ${JSON.stringify(sentAt)} is not an ISO 8601 date-time`);
    shared.sentAt = normalized;
  }
  const calls: IngestCall[] = [];
  const rejected: Rejection[] = [];
  const taken = Math.min(batch.length, MAX_BATCH_CALLS);
  for (let index = 0; index < taken; index++) {
    const call = parseCall(batch[index], shared);
    if (call instanceof TooLarge) return tooLarge(`batch[${index}]: ${call.message}`);
    if (typeof call === "string") rejected.push({ index, reason: call });
    else calls.push(call);
  }
  // The real API answers 200 and drops the calls past its limit: one rejection stands for them all.
  const dropped = batch.length - taken;
  if (dropped > 0) {
    rejected.push({ index: taken, count: dropped, reason: `a batch holds at most 2,500 calls: the ${dropped} from index ${taken} on were dropped` });
  }
  return { ok: true, calls, rejected };
}

/** A call over the 32 KB limit: the whole request is refused (400 request_too_large), as the real API does. */
class TooLarge {
  constructor(readonly message: string) {}
}

function tooLarge(error: string): IngestResult {
  return { ok: false, status: 400, code: "request_too_large", error };
}

interface Shared {
  context?: Json;
  integrations?: Json;
  sentAt?: string;
}

function invalid(error: string): IngestResult {
  return { ok: false, status: 400, code: "invalid_request", error };
}

const ID_KEYS = ["userId", "anonymousId", "groupId", "previousId"] as const;
const TEXT_KEYS = ["event", "name", "category", "messageId"] as const;
const OBJECT_KEYS = ["properties", "traits", "context", "integrations"] as const;

/** One call checked by the one message model (as an incoming call), or the reason it is invalid. */
function parseCall(value: unknown, shared: Shared): IngestCall | string | TooLarge {
  if (!isPlainObject(value)) return "a call must be a JSON object";
  const size = Buffer.byteLength(JSON.stringify(value));
  if (size > MAX_MESSAGE_BYTES) return new TooLarge(`a call is over the 32 KB limit (${size} > ${MAX_MESSAGE_BYTES} bytes)`);
  const type = value["type"];
  if (typeof type !== "string" || !(CALL_TYPES as readonly string[]).includes(type)) {
    return `"type" must be one of ${CALL_TYPES.join(", ")}${type === undefined ? "" : `, got ${JSON.stringify(type)}`}`;
  }
  const input = withStringIds(value);
  const check = checkMessage(input, { call: true });
  const first = check.errors[0];
  if (first) return check.errors.length === 1 ? first.message : `${first.message} (and ${check.errors.length - 1} more)`;

  const call: IngestCall = { type: type as CallType };
  for (const key of ID_KEYS) if (typeof input[key] === "string") call[key] = input[key];
  for (const key of TEXT_KEYS) if (typeof input[key] === "string") call[key] = input[key];
  for (const key of OBJECT_KEYS) if (isPlainObject(input[key])) call[key] = input[key];
  if (shared.context) call.context = { ...shared.context, ...call.context };
  if (shared.integrations) call.integrations = { ...shared.integrations, ...call.integrations };
  // Checked above, so these normalize.
  const timestamp = normalizeTimestamp(input["timestamp"]);
  if (timestamp !== undefined) call.timestamp = timestamp;
  const sentAt = normalizeTimestamp(input["sentAt"]) ?? shared.sentAt;
  if (sentAt !== undefined) call.sentAt = sentAt;
  return call;
}

/**
 * Ids as the model expects them: a number becomes its string (some clients
 * send numeric ids; analytics-node does the same), an empty string counts as
 * absent, and an alias in the `"Previous ID"` keys (docs/messages.md#alias-keys) (what `generate` prints) uses the API's.
 */
function withStringIds(value: Json): Json {
  const out: Json = { ...value };
  if (out["type"] === "alias") {
    for (const [spec, camel] of [
      ["Previous ID", "previousId"],
      ["User ID", "userId"],
    ] as const) {
      if (out[camel] === undefined && Object.hasOwn(out, spec)) out[camel] = out[spec];
      delete out[spec];
    }
  }
  for (const key of ID_KEYS) {
    const id = out[key];
    if (id === "" || id === null) delete out[key];
    else if (typeof id === "number" && Number.isFinite(id)) out[key] = String(id);
  }
  return out;
}
