import { SCHEMES, type SchemeName } from "../../src/signing/schemes.js";
import { schemeKeys } from "../../src/signing/secrets.js";
import { signRequest, type SignedRequest, type SignInput } from "../../src/signing/sign.js";
import { verifySignature, type VerifyInput, type Verification, type VerifyOptions } from "../../src/signing/verify.js";

/**
 * The signing room's tests (test/unit/signing/<scheme>.test.ts) sign with our signer and verify
 * with our verifier through these; each scheme's owner's library judges the results.
 */

/** JSON bodies, as the owners' verifiers parse them: plain, and one with non-ASCII text (2-, 3- and 4-byte UTF-8). */
export const BODIES = {
  ascii: Buffer.from('{"type":"track","event":"Order Completed","properties":{"total":42}}'),
  nonAscii: Buffer.from('{"type":"identify","traits":{"name":"Zoë Ångström","city":"東京","mood":"🙂"}}'),
} as const;

/** The clock now, in Unix seconds: the owners' verifiers read the real clock. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Signs with our one signer. */
export function ourSign(scheme: SchemeName, secrets: readonly string[], input: SignInput): SignedRequest {
  return signRequest(SCHEMES[scheme], schemeKeys(SCHEMES[scheme], secrets), input);
}

/** Verifies with our one verifier at the clock now unless `now` (ms) is given. */
export function ourVerify(
  scheme: SchemeName,
  secrets: readonly string[],
  request: Omit<VerifyInput, "now"> & { now?: number },
  options?: VerifyOptions,
): Verification {
  return verifySignature(SCHEMES[scheme], schemeKeys(SCHEMES[scheme], secrets), { now: Date.now(), ...request }, options);
}

/** Headers as node:http gives them: lower-case names. */
export function received(headers: readonly (readonly [string, string])[]): Record<string, string> {
  return Object.fromEntries(headers.map(([name, value]) => [name.toLowerCase(), value]));
}

/** One header's value by name, any case. */
export function headerOf(headers: readonly (readonly [string, string])[], name: string): string {
  const found = headers.find(([n]) => n.toLowerCase() === name.toLowerCase());
  if (!found) throw new Error(`no ${name} header among ${headers.map(([n]) => n).join(", ")}`);
  return found[1];
}

/** The body with one byte changed. */
export function changedByte(body: Buffer, at = Math.floor(body.length / 2)): Buffer {
  const copy = Buffer.from(body);
  copy[at] = (copy[at] as number) ^ 0x01;
  return copy;
}
