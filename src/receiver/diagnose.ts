import { createHmac, timingSafeEqual } from "node:crypto";
import { sign } from "../signing.js";
import { parseJson } from "../util/json-depth.js";

/** The likely reason an X-Signature did not verify. */
export type DiagnosisCause = "prefix" | "uppercase" | "sha256" | "secret-whitespace" | "reencoded" | "reserialized" | "format";

export interface Diagnosis {
  cause: DiagnosisCause;
  /** One sentence for people: what the sender probably did and what to change. */
  message: string;
}

/** Larger bodies with a wrong signature get no diagnosis: each costs several HMACs and re-serializations. */
export const DIAGNOSIS_MAX_BYTES = 64 * 1024;

const HEX = /^[0-9a-fA-F]+$/;
const PREFIX = /^(sha1|sha256)=(.*)$/i;

/**
 * Guesses why `header` is not the HMAC-SHA1 of `raw` under `secret` by trying
 * the mistakes senders commonly make. Only runs for failed signatures on
 * small bodies (DIAGNOSIS_MAX_BYTES: it re-serializes the body several ways);
 * returns null when nothing explains the mismatch.
 */
export function diagnoseSignature(raw: Uint8Array, header: string, secret: string): Diagnosis | null {
  let digest = header.trim();
  const prefix = PREFIX.exec(digest);
  if (prefix) digest = prefix[2] ?? "";
  const upper = HEX.test(digest) && digest !== digest.toLowerCase();
  digest = digest.toLowerCase();

  if (sameDigest(digest, sign(secret, raw))) {
    if (prefix && upper) return { cause: "prefix", message: `the digest has a "${prefix[1]}=" prefix and upper-case hex: send the bare lowercase hex digest` };
    if (prefix) return { cause: "prefix", message: `the digest has a "${prefix[1]}=" prefix: send the bare hex digest` };
    if (upper) return { cause: "uppercase", message: "the digest is upper-case hex: send it lowercase" };
  }
  if (sameDigest(digest, createHmac("sha256", secret).update(raw).digest("hex"))) {
    return { cause: "sha256", message: "signed with HMAC-SHA256 instead of HMAC-SHA1" };
  }

  const whitespace = secretVariant(raw, digest, secret);
  if (whitespace) return whitespace;
  const body = bodyVariant(raw, digest, secret);
  if (body) return body;

  if (HEX.test(digest) && digest.length === 64) {
    return { cause: "sha256", message: "64 hex digits: looks like an SHA-256 digest (expected HMAC-SHA1, 40 hex digits)" };
  }
  if (!HEX.test(digest) || digest.length !== 40) {
    return { cause: "format", message: "not a 40-digit hex HMAC-SHA1 digest" };
  }
  return null;
}

function secretVariant(raw: Uint8Array, digest: string, secret: string): Diagnosis | null {
  const trimmed = secret.trim();
  if (trimmed !== secret && sameDigest(sign(trimmed, raw), digest)) {
    return { cause: "secret-whitespace", message: "the receiver's secret has stray whitespace the sender's has not: strip it (check --secret-file)" };
  }
  for (const variant of [`${trimmed}\n`, `${trimmed}\r\n`, `${trimmed} `, ` ${trimmed}`, `${trimmed}\t`, `\n${trimmed}`]) {
    if (variant !== secret && sameDigest(sign(variant, raw), digest)) {
      return { cause: "secret-whitespace", message: `the sender's secret has stray whitespace (${JSON.stringify(variant.replace(trimmed, "…"))}): strip it` };
    }
  }
  return null;
}

function bodyVariant(raw: Uint8Array, digest: string, secret: string): Diagnosis | null {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = bytes.toString("utf8");
  const matches = (candidate: string | Uint8Array): boolean => sameDigest(sign(secret, candidate), digest);

  // Encodings: the same characters, other bytes.
  if (matches(Buffer.from(text, "latin1")) && !Buffer.from(text, "latin1").equals(bytes)) {
    return { cause: "reencoded", message: "the body was signed as Latin-1 but sent as UTF-8: sign the exact bytes sent" };
  }
  const asLatin1 = bytes.toString("latin1");
  if (matches(Buffer.from(asLatin1, "utf8")) && !Buffer.from(asLatin1, "utf8").equals(bytes)) {
    return { cause: "reencoded", message: "the body was sent as Latin-1 but signed as UTF-8: send UTF-8 and sign the exact bytes sent" };
  }

  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch {
    return null;
  }
  const compact = JSON.stringify(parsed);
  const escaped = escapeNonAscii(compact);
  if (escaped !== text && matches(escaped)) {
    return { cause: "reencoded", message: "the body was signed with non-ASCII characters escaped (\\uXXXX) but sent unescaped: sign the exact bytes sent" };
  }
  if (compact !== text && matches(compact)) {
    return escapeNonAscii(text) === escaped
      ? { cause: "reencoded", message: "the body was sent with \\uXXXX escapes but signed unescaped: sign the exact bytes sent" }
      : { cause: "reserialized", message: "the signature matches JSON.stringify of the body, not the bytes sent: the body was re-serialized after signing" };
  }
  for (const indent of [2, 4, "\t"]) {
    const pretty = JSON.stringify(parsed, null, indent);
    if (pretty !== text && matches(pretty)) {
      return { cause: "reserialized", message: "the signature matches a pretty-printed form of the body, not the bytes sent: sign the exact bytes sent" };
    }
  }
  return null;
}

/** Digest comparison in constant time, so the diagnosis reveals nothing through its timing. */
function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

function escapeNonAscii(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
