import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from "node:crypto";

/** Bytes as sent on the wire; strings are taken as UTF-8. */
export type BodyBytes = string | Uint8Array;

/** A secret as text, bytes, or a KeyObject made from them once (saves converting the text on every call). */
export type SecretKey = string | Uint8Array | KeyObject;

/**
 * The secret as the key to sign many bodies with: a KeyObject of its UTF-8 bytes (the same HMAC
 * as the text). A string key is converted on every call, and on Node.js 24 a Buffer key costs
 * about 10 µs more per call than a KeyObject (its key-type checks); a KeyObject is fast on all.
 * An empty secret stays text.
 */
export function signingKey(secret: string): SecretKey {
  return secret === "" ? secret : createSecretKey(Buffer.from(secret, "utf8"));
}

/** Lowercase hex HMAC-SHA1 of the exact body bytes, keyed by the shared secret. */
export function sign(secret: SecretKey, body: BodyBytes): string {
  return createHmac("sha1", secret).update(body).digest("hex");
}

/**
 * True when `header` is the signature of `body` under `secret`. Compares in
 * constant time and returns false (never throws) for missing, odd-length or
 * non-string headers.
 */
export function verify(secret: SecretKey, body: BodyBytes, header: unknown): boolean {
  return typeof header === "string" && sameText(sign(secret, body), header);
}

/** Whether a signature given equals the one computed, compared in constant time over their bytes (every scheme's verifier). */
export function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected, "latin1");
  const b = Buffer.from(given, "latin1");
  return a.length === b.length && timingSafeEqual(a, b);
}
