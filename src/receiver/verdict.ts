import { isUtf8 } from "node:buffer";
import { userIdOf, type ShapeIssue } from "../messages/check.js";
import type { MessageType } from "../messages/schemas.js";
import { signingKey, verify, type SecretKey } from "../signing.js";
import { DIAGNOSIS_MAX_BYTES, diagnoseSignature, type Diagnosis } from "./diagnose.js";
import { checkShape } from "../messages/check-fast.js";
import { parseJson } from "../util/json-depth.js";
import { isPlainObject } from "../util/json.js";

/** Request headers as node:http gives them (lower-case names). */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface VerdictOptions {
  /** The shared secret; without one every request is accepted and marked unsigned. */
  secret?: string | undefined;
  /** Unknown top-level keys are errors instead of warnings. */
  strict?: boolean;
}

export interface RequestVerdict {
  /** Body size in bytes. */
  size: number;
  /** true: verified; false: missing or wrong; null: no secret configured (unsigned). */
  signatureValid: boolean | null;
  /** Short reason when `signatureValid` is false. */
  signatureError: string | null;
  diagnosis: Diagnosis | null;
  /** The body decoded as UTF-8, or null when it is not valid UTF-8. */
  text: string | null;
  /** The parsed JSON body; undefined when the body is not JSON. */
  body: unknown;
  type: MessageType | undefined;
  userId: string | undefined;
  /** Track's event name or screen's name, for display. */
  name: string | undefined;
  /** Body problems (not JSON, missing or wrongly typed keys), named by key. */
  shapeErrors: ShapeIssue[];
  shapeWarnings: ShapeIssue[];
  /** Signature (when checked) and shape both fine: what the exit code counts. */
  valid: boolean;
}

/**
 * The one request verifier (docs/receiver.md#signature-check, docs/receiver.md#shape-check): HMAC-SHA1 over the raw bytes as
 * received, then the message shape. Pure: bytes and headers in, verdict out.
 */
export function judgeRequest(raw: Uint8Array, headers: RequestHeaders, options: VerdictOptions = {}): RequestVerdict {
  const { signatureValid, signatureError, diagnosis } = checkSignature(raw, headers, options.secret);
  const { text, body, problem } = readJsonBody(raw);

  let shapeErrors: ShapeIssue[];
  let shapeWarnings: ShapeIssue[] = [];
  if (problem !== null) {
    shapeErrors = [{ key: "(body)", message: problem }];
  } else {
    const check = checkShape(body, options.strict ?? false);
    shapeErrors = check.errors;
    shapeWarnings = check.warnings;
  }

  const message = isPlainObject(body) ? body : undefined;
  const type = message?.["type"];
  return {
    size: raw.byteLength,
    signatureValid,
    signatureError,
    diagnosis,
    text,
    body,
    type: shapeErrors.length > 0 && shapeErrors.some((e) => e.key === "type" || e.key === "(body)") ? undefined : (type as MessageType),
    userId: userIdOf(message),
    name: stringOf(message?.["event"]) ?? stringOf(message?.["name"]),
    shapeErrors,
    shapeWarnings,
    valid: signatureValid !== false && shapeErrors.length === 0,
  };
}

/** A body as the verifier reads it: its UTF-8 text, its parsed JSON, or why it has none. */
export interface JsonBody {
  /** null when the bytes are not valid UTF-8. */
  text: string | null;
  /** undefined when the body is not JSON. */
  body: unknown;
  /** Why there is no parsed body (not UTF-8, empty, not JSON), or null. */
  problem: string | null;
}

/**
 * Decodes and parses a body the way judgeRequest does. The views that show a
 * body later (the inspector, --verbose, a relayed request's recording line)
 * call it again rather than keep the parsed copy: a parsed body can take 25
 * times its size in memory.
 */
export function readJsonBody(raw: Uint8Array): JsonBody {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = isUtf8(bytes) ? bytes.toString("utf8") : null;
  if (text === null) return { text, body: undefined, problem: "the body is not valid UTF-8" };
  if (text.length === 0) return { text, body: undefined, problem: "the body is empty" };
  try {
    return { text, body: parseJson(text), problem: null };
  } catch (error) {
    return { text, body: undefined, problem: `not JSON: ${(error as Error).message}` };
  }
}

/** The verdict without its text and parsed body, for a request that waits (a parsed body can take 25 times its bytes). */
export function withoutBody(verdict: RequestVerdict): RequestVerdict {
  return { ...verdict, text: null, body: undefined };
}

/** The verdict with its text and parsed body read again from the bytes it was made from. */
export function withBody(verdict: RequestVerdict, raw: Uint8Array): RequestVerdict {
  const { text, body } = readJsonBody(raw);
  return { ...verdict, text, body };
}

function checkSignature(
  raw: Uint8Array,
  headers: RequestHeaders,
  secret: string | undefined,
): Pick<RequestVerdict, "signatureValid" | "signatureError" | "diagnosis"> {
  if (secret === undefined) return { signatureValid: null, signatureError: null, diagnosis: null };
  const header = headers["x-signature"];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === "") {
    return { signatureValid: false, signatureError: "missing X-Signature header", diagnosis: null };
  }
  if (verify(secretKey(secret), raw, value)) return { signatureValid: true, signatureError: null, diagnosis: null };
  return {
    signatureValid: false,
    signatureError: "X-Signature does not match the body",
    diagnosis: raw.byteLength <= DIAGNOSIS_MAX_BYTES ? diagnoseSignature(raw, value, secret) : null,
  };
}

// The HMAC key made once per secret, not converted from the text on every request.
let lastSecret: string | undefined;
let lastKey: SecretKey | undefined;

function secretKey(secret: string): SecretKey {
  if (secret !== lastSecret || lastKey === undefined) {
    lastKey = signingKey(secret);
    lastSecret = secret;
  }
  return lastKey;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
