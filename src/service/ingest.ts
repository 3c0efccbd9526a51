import type { Source } from "../settings.js";
import { parseJson } from "../util/json-depth.js";

/**
 * The inbound collection API's request bodies (CONTRACT.md 5), pure: raw bytes
 * and headers in, accepted calls or a 4xx verdict out. Shapes follow the
 * client libraries: ours and the public Segment-compatible ones (`batch`,
 * `writeKey`, `sentAt`, `messageId`, `context`, `integrations`).
 */

/** CONTRACT.md 5: one message's JSON at most 32 KB. */
export const MAX_MESSAGE_BYTES = 32_768;
/** CONTRACT.md 5: one request body at most 500 KB. */
export const MAX_REQUEST_BYTES = 512_000;

export const CALL_TYPES = ["identify", "track", "page", "screen", "group", "alias"] as const;
export type CallType = (typeof CALL_TYPES)[number];

type Json = Record<string, unknown>;

/** One validated call as a client sent it (timestamp already normalized). */
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
  messageId?: string;
}

export type IngestResult =
  | { ok: true; calls: IngestCall[] }
  | { ok: false; status: 400; error: string; index?: number };

/** Paths that take a batch, and the single-call paths with the type they imply. */
export function routeFor(path: string): { kind: "batch" } | { kind: "single"; type: CallType } | { kind: "delete" } | undefined {
  const bare = path.replace(/\/+$/, "");
  if (bare === "/v1/batch" || bare === "/v1/import") return { kind: "batch" };
  if (bare === "/v1/delete") return { kind: "delete" };
  const match = /^\/v1\/([a-z]+)$/.exec(bare);
  const type = match?.[1];
  if (type !== undefined && (CALL_TYPES as readonly string[]).includes(type)) return { kind: "single", type: type as CallType };
  return undefined;
}

export type JsonBodyResult = { ok: true; body: Json } | { ok: false; status: 400; error: string };

/** Parses a request body: size limit first, then UTF-8 JSON, then an object at the top. */
export function parseJsonBody(raw: Buffer): JsonBodyResult {
  if (raw.length > MAX_REQUEST_BYTES) {
    return { ok: false, status: 400, error: `request body is over the 500 KB limit (${MAX_REQUEST_BYTES} bytes)` };
  }
  if (raw.length === 0) return { ok: false, status: 400, error: "request body is empty: expected a JSON object" };
  let value: unknown;
  try {
    value = parseJson(raw.toString("utf8"));
  } catch (error) {
    return { ok: false, status: 400, error: `request body is not valid JSON: ${(error as Error).message}` };
  }
  if (!isObject(value)) return { ok: false, status: 400, error: "request body must be a JSON object" };
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
 * Validates the calls of one request, all or nothing: the first invalid one
 * rejects the request with its index. Batch-level `context` and
 * `integrations` are merged under each call's own (the call's keys win).
 */
export function parseCalls(route: { kind: "batch" } | { kind: "single"; type: CallType }, body: Json): IngestResult {
  if (route.kind === "single") {
    const call = parseCall({ ...body, type: body["type"] ?? route.type }, undefined);
    if (typeof call === "string") return { ok: false, status: 400, error: call };
    if (call.type !== route.type) return { ok: false, status: 400, error: `"type" is "${call.type}" but the path is /v1/${route.type}` };
    return { ok: true, calls: [call] };
  }
  const batch = body["batch"];
  if (!Array.isArray(batch)) return { ok: false, status: 400, error: `"batch" must be an array of calls` };
  const shared = { context: body["context"], integrations: body["integrations"] };
  if (shared.context !== undefined && shared.context !== null && !isObject(shared.context)) {
    return { ok: false, status: 400, error: `"context" must be an object` };
  }
  if (shared.integrations !== undefined && shared.integrations !== null && !isObject(shared.integrations)) {
    return { ok: false, status: 400, error: `"integrations" must be an object` };
  }
  const calls: IngestCall[] = [];
  for (let index = 0; index < batch.length; index++) {
    const call = parseCall(batch[index], shared);
    if (typeof call === "string") return { ok: false, status: 400, error: `batch[${index}]: ${call}`, index };
    calls.push(call);
  }
  return { ok: true, calls };
}

const IDENTIFIED: ReadonlySet<CallType> = new Set(["identify", "track", "page", "screen", "group"]);

/** One call, or the reason it is invalid. */
function parseCall(value: unknown, shared: { context: unknown; integrations: unknown } | undefined): IngestCall | string {
  if (!isObject(value)) return "a call must be a JSON object";
  const size = Buffer.byteLength(JSON.stringify(value));
  if (size > MAX_MESSAGE_BYTES) return `message is over the 32 KB limit (${size} > ${MAX_MESSAGE_BYTES} bytes)`;

  const type = value["type"];
  if (typeof type !== "string" || !(CALL_TYPES as readonly string[]).includes(type)) {
    return `"type" must be one of ${CALL_TYPES.join(", ")}${type === undefined ? "" : `, got ${JSON.stringify(type)}`}`;
  }
  const call: IngestCall = { type: type as CallType };

  for (const key of ["userId", "anonymousId", "groupId", "previousId"] as const) {
    const id = identifier(value[key]);
    if (id === null) return `"${key}" must be a string`;
    if (id !== undefined) call[key] = id;
  }
  for (const key of ["event", "name", "category", "messageId"] as const) {
    const text = value[key];
    if (text === undefined || text === null) continue;
    if (typeof text !== "string") return `"${key}" must be a string`;
    call[key] = text;
  }
  for (const key of ["properties", "traits", "context", "integrations"] as const) {
    const object = value[key];
    if (object === undefined || object === null) continue;
    if (!isObject(object)) return `"${key}" must be an object`;
    call[key] = object;
  }
  if (shared && isObject(shared.context)) call.context = { ...shared.context, ...call.context };
  if (shared && isObject(shared.integrations)) call.integrations = { ...shared.integrations, ...call.integrations };

  const timestamp = value["timestamp"];
  if (timestamp !== undefined && timestamp !== null) {
    const normalized = normalizeTimestamp(timestamp);
    if (normalized === undefined) return `"timestamp" ${JSON.stringify(timestamp)} is not an ISO 8601 date-time`;
    call.timestamp = normalized;
  }

  if (IDENTIFIED.has(call.type) && call.userId === undefined && call.anonymousId === undefined) {
    return `${call.type} call needs "userId" or "anonymousId"`;
  }
  if (call.type === "track" && (call.event === undefined || call.event === "")) return `track call needs "event"`;
  if (call.type === "group" && call.groupId === undefined) return `group call needs "groupId"`;
  if (call.type === "alias") {
    if (call.userId === undefined) return `alias call needs "userId"`;
    if (call.previousId === undefined) return `alias call needs "previousId"`;
  }
  return call;
}

/** A non-empty string, or a number (some clients send numeric IDs); undefined when absent, null when wrong. */
function identifier(value: unknown): string | undefined | null {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return null;
}

// An ISO 8601 date with a time: clients send `Z`, `+00:00` or `+0000` offsets and other precisions.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i;

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Any ISO 8601 date-time → `2012-12-02T00:30:08.276Z`; undefined when it is not one. */
export function normalizeTimestamp(value: unknown): string | undefined {
  // Most clients already send the canonical form: keep it when it names a real instant.
  if (typeof value === "string" && CANONICAL.test(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime()) && date.toISOString() === value) return value;
  }
  if (typeof value !== "string" || !ISO_DATE_TIME.test(value.trim())) return undefined;
  let text = value.trim().replace(/^(\d{4}-\d{2}-\d{2})\s+/, "$1T").replace(/\s+/g, "");
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) text += "T00:00:00";
  // Without an offset a client's local time is unknowable; read it as UTC, not as this machine's zone.
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(text)) text += "Z";
  text = text.replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
