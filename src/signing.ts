/**
 * The default scheme's primitives (X-Signature, HMAC-SHA1 hex of the body), kept at this path for
 * the modules and library users that import them from here; they live in the signing room now.
 */
export { type BodyBytes, type SecretKey, sign, signingKey, verify } from "./signing/x-signature.js";
