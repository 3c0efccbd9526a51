import { createSecretKey, type KeyObject } from "node:crypto";
import { SecretFormatError } from "../errors.js";
import type { Scheme } from "./schemes.js";

/** A secret made ready for one scheme: the HMAC key, made once (signing many bodies reuses it). */
export interface SchemeKey {
  readonly key: KeyObject;
  /** Its place among the secrets given (0: the first), reported when it matched. */
  readonly index: number;
}

const WHSEC = "whsec_";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The keys of `secrets` under `scheme`'s secret format (docs/schemes.md#secrets), in order. A
 * secret the format cannot take is a SecretFormatError naming which one and why; nothing is
 * signed or verified with the others. Pure.
 */
export function schemeKeys(scheme: Scheme, secrets: readonly string[]): SchemeKey[] {
  if (secrets.length === 0) throw new SecretFormatError(`scheme ${scheme.name} needs a secret`);
  return secrets.map((secret, index) => ({ key: createSecretKey(keyBytes(scheme, secret, index, secrets.length)), index }));
}

function keyBytes(scheme: Scheme, secret: string, index: number, count: number): Buffer {
  const which = count > 1 ? `secret ${index + 1} of ${count}` : "the secret";
  if (secret === "") throw new SecretFormatError(`${which} is empty`, { index });
  if (scheme.secret === "text") return Buffer.from(secret, "utf8");
  // Standard Webhooks: `whsec_` then base64 (the owner's library also takes the base64 alone).
  const encoded = secret.startsWith(WHSEC) ? secret.slice(WHSEC.length) : secret;
  if (encoded === "" || !BASE64.test(encoded)) {
    throw new SecretFormatError(
      `${which} is not a ${scheme.name} secret: it must be whsec_ followed by base64 (as the sender shows it: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw), ` +
        `got ${describeSecret(secret)}`,
      { index },
    );
  }
  return Buffer.from(encoded, "base64");
}

/** What is wrong with a secret's shape, without printing it: its length and where the first bad character is. */
function describeSecret(secret: string): string {
  const encoded = secret.startsWith(WHSEC) ? secret.slice(WHSEC.length) : secret;
  if (encoded === "") return "nothing after whsec_";
  const bad = encoded.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return `a character base64 does not use at position ${bad + 1} of ${encoded.length}${secret.startsWith(WHSEC) ? " after whsec_" : ""}`;
  return `${encoded.length} characters, which is not whole base64 (a multiple of 4 with = padding only at the end)`;
}
