import { signingKey, verify, type SecretKey } from "../signing/x-signature.js";
import { firstElementBytes, isJsonArrayBody, type ByteSpan } from "../json/first-element.js";
import { diagnoseSignature, type Diagnosis } from "./diagnose.js";
import type { RequestVerdict } from "./verdict.js";

/**
 * The bytes an X-Signature matched: the whole body (the classic destination, and Webhooks (Actions)
 * for one event), or element 0 of a batch exactly as it stands in the raw body (Webhooks (Actions)
 * signs `JSON.stringify` of the first event's data only).
 */
export type SignatureRule = NonNullable<RequestVerdict["signatureRule"]>;

export interface SignatureCheck {
  /** true: verified; false: missing or wrong; null: not checked (no secret, or a request the sender never signs). */
  signatureValid: boolean | null;
  signatureError: string | null;
  signatureRule: SignatureRule | null;
  /** What a verdict other than a plain match means: a request sent unsigned by design, or a signature over element 0 only. */
  signatureNote: string | null;
  diagnosis: Diagnosis | null;
}

export const FIRST_ELEMENT_NOTE =
  "X-Signature covers element 0 only (the Webhooks (Actions) batch rule): the other elements are not signed, and a receiver that hashes the whole body would reject this batch";
export const NO_DATA_NOTE = "no X-Signature: Webhooks (Actions) sends none for a request without data (no body)";
export const NULL_FIRST_NOTE =
  "no X-Signature: Webhooks (Actions) sends none when a batch's element 0 is null (an event without data), so nothing in this batch is signed";

// The common answers, made once: the check runs for every request.
const NOT_CHECKED: SignatureCheck = result(null, null, null, null);
const BODY_MATCH: SignatureCheck = result(true, null, "body", null);
const FIRST_ELEMENT_MATCH: SignatureCheck = result(true, null, "first-element", FIRST_ELEMENT_NOTE);
const MISSING: SignatureCheck = result(false, "missing X-Signature header", null, null);
const NO_DATA: SignatureCheck = result(null, null, null, NO_DATA_NOTE);
const NULL_FIRST: SignatureCheck = result(null, null, null, NULL_FIRST_NOTE);
const NULL_BYTES = Buffer.from("null");

/**
 * Checks X-Signature (docs/receiver.md#signature-check): HMAC-SHA1 of the whole raw body, then,
 * for a JSON array, of its element 0's bytes as received (never re-serialized). A missing header is
 * a failure except where the real sender sends none: an empty body, or a batch whose element 0 is null.
 */
export function checkSignature(raw: Uint8Array, header: string | string[] | undefined, secret: string | undefined): SignatureCheck {
  if (secret === undefined) return NOT_CHECKED;
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === "") {
    if (raw.byteLength === 0) return NO_DATA;
    return isJsonArrayBody(raw) && isNullSpan(raw, firstElementBytes(raw)) ? NULL_FIRST : MISSING;
  }
  const key = secretKey(secret);
  // The whole body first: one HMAC for every single request, signed either way.
  if (verify(key, raw, value)) return BODY_MATCH;
  const span = isJsonArrayBody(raw) ? firstElementBytes(raw) : null;
  if (span !== null && verify(key, raw.subarray(span.start, span.end), value)) return FIRST_ELEMENT_MATCH;
  const error = span !== null ? "X-Signature matches neither the whole body nor its element 0" : "X-Signature does not match the body";
  return result(false, error, null, null, diagnoseSignature(raw, value, secret, span));
}

function isNullSpan(raw: Uint8Array, span: ByteSpan | null): boolean {
  return span !== null && span.end - span.start === 4 && NULL_BYTES.equals(raw.subarray(span.start, span.end));
}

function result(
  signatureValid: boolean | null,
  signatureError: string | null,
  signatureRule: SignatureRule | null,
  signatureNote: string | null,
  diagnosis: Diagnosis | null = null,
): SignatureCheck {
  return { signatureValid, signatureError, signatureRule, signatureNote, diagnosis };
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
