import { createHmac, timingSafeEqual } from "node:crypto";
import { sign } from "../signing/x-signature.js";
import { parseUntrustedJson } from "../json/parse.js";
import type { ByteSpan } from "../json/first-element.js";

/** The likely reason an X-Signature did not verify. */
/** `neither-rule`: a batch whose X-Signature matches neither the whole body nor element 0, for no reason found. */
export type DiagnosisCause = "prefix" | "uppercase" | "sha256" | "secret-whitespace" | "reencoded" | "reserialized" | "format" | "neither-rule";

export interface Diagnosis {
  cause: DiagnosisCause;
  /** One sentence for people: what the sender probably did and what to change. */
  message: string;
}

/** Larger bodies with a wrong signature get no guess (each costs several HMACs and re-serializations); a batch still gets both rules explained. */
export const DIAGNOSIS_MAX_BYTES = 64 * 1024;

const HEX = /^[0-9a-fA-F]+$/;
const PREFIX = /^(sha1|sha256)=(.*)$/i;

/**
 * Guesses why `header` is not the HMAC-SHA1 of `raw` under `secret` by trying
 * the mistakes senders commonly make. Tries bodies up to DIAGNOSIS_MAX_BYTES
 * (it re-serializes them several ways); returns null when nothing explains the
 * mismatch. For a batch (`firstElement`: element 0's bytes in `raw`) it tries
 * element 0 too, and always explains both rules, since a receiver that hashes the
 * whole batch rejects every batch Webhooks (Actions) sends.
 */
export function diagnoseSignature(raw: Uint8Array, header: string, secret: string, firstElement: ByteSpan | null = null): Diagnosis | null {
  const digest = readDigest(header);
  let found: Diagnosis | null = null;
  if (raw.byteLength <= DIAGNOSIS_MAX_BYTES) {
    found = explain(raw, digest, secret, "the body");
    if (found === null && firstElement !== null) {
      found = explain(raw.subarray(firstElement.start, firstElement.end), digest, secret, "element 0");
      if (found) found = { ...found, message: `over element 0: ${found.message}` };
    } else if (found !== null && firstElement !== null) found = { ...found, message: `over the whole body: ${found.message}` };
  } else if (firstElement === null) return null;
  found ??= formatProblem(digest);
  if (firstElement === null) return found;
  const rules = bothRules(firstElement);
  return found ? { cause: found.cause, message: `${found.message}. ${rules}` } : { cause: "neither-rule", message: `neither rule matches. ${rules}` };
}

/** The two byte ranges a batch's X-Signature may cover, and why a whole-body check is not enough. */
function bothRules(span: ByteSpan): string {
  return (
    `A batch's X-Signature is checked over the whole body and over element 0's exact bytes (bytes ${span.start}–${span.end - 1}): ` +
    "Webhooks (Actions) signs element 0 only, so a receiver that hashes the whole batch rejects every real batch"
  );
}

interface Digest {
  /** Lowercase, without a `sha1=` prefix. */
  digest: string;
  prefix: string | null;
  upper: boolean;
}

function readDigest(header: string): Digest {
  let digest = header.trim();
  const prefix = PREFIX.exec(digest);
  if (prefix) digest = prefix[2] ?? "";
  const upper = HEX.test(digest) && digest !== digest.toLowerCase();
  return { digest: digest.toLowerCase(), prefix: prefix ? (prefix[1] ?? "") : null, upper };
}

/** A sender's mistake that explains the digest for these bytes (`what` names them in the message), or null. */
function explain(raw: Uint8Array, { digest, prefix, upper }: Digest, secret: string, what: string): Diagnosis | null {
  if (sameDigest(digest, sign(secret, raw))) {
    if (prefix !== null && upper)
      return { cause: "prefix", message: `the digest has a "${prefix}=" prefix and upper-case hex: send the bare lowercase hex digest` };
    if (prefix !== null) return { cause: "prefix", message: `the digest has a "${prefix}=" prefix: send the bare hex digest` };
    if (upper) return { cause: "uppercase", message: "the digest is upper-case hex: send it lowercase" };
  }
  if (sameDigest(digest, createHmac("sha256", secret).update(raw).digest("hex"))) {
    return { cause: "sha256", message: "signed with HMAC-SHA256 instead of HMAC-SHA1" };
  }
  return secretVariant(raw, digest, secret) ?? bodyVariant(raw, digest, secret, what);
}

/** A digest that cannot be an HMAC-SHA1 hex digest at all. */
function formatProblem({ digest }: Digest): Diagnosis | null {
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

function bodyVariant(raw: Uint8Array, digest: string, secret: string, what: string): Diagnosis | null {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = bytes.toString("utf8");
  const matches = (candidate: string | Uint8Array): boolean => sameDigest(sign(secret, candidate), digest);

  // Encodings: the same characters, other bytes.
  if (matches(Buffer.from(text, "latin1")) && !Buffer.from(text, "latin1").equals(bytes)) {
    return { cause: "reencoded", message: `${what} was signed as Latin-1 but sent as UTF-8: sign the exact bytes sent` };
  }
  const asLatin1 = bytes.toString("latin1");
  if (matches(Buffer.from(asLatin1, "utf8")) && !Buffer.from(asLatin1, "utf8").equals(bytes)) {
    return { cause: "reencoded", message: `${what} was sent as Latin-1 but signed as UTF-8: send UTF-8 and sign the exact bytes sent` };
  }

  let parsed: unknown;
  try {
    parsed = parseUntrustedJson(text);
  } catch {
    return null;
  }
  const compact = JSON.stringify(parsed);
  const escaped = escapeNonAscii(compact);
  // Only when escaping changed something: an ASCII body's escaped form is its compact form (a re-serialization, below).
  if (escaped !== compact && escaped !== text && matches(escaped)) {
    return { cause: "reencoded", message: `${what} was signed with non-ASCII characters escaped (\\uXXXX) but sent unescaped: sign the exact bytes sent` };
  }
  if (compact !== text && matches(compact)) {
    return escapeNonAscii(text) === escaped
      ? { cause: "reencoded", message: `${what} was sent with \\uXXXX escapes but signed unescaped: sign the exact bytes sent` }
      : { cause: "reserialized", message: `the signature matches JSON.stringify of ${what}, not the bytes sent: ${what} was re-serialized after signing` };
  }
  for (const indent of [2, 4, "\t"]) {
    const pretty = JSON.stringify(parsed, null, indent);
    if (pretty !== text && matches(pretty)) {
      return { cause: "reserialized", message: `the signature matches a pretty-printed form of ${what}, not the bytes sent: sign the exact bytes sent` };
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
