/**
 * The signing room's face (docs/schemes.md): the schemes as data, one signer, one verifier,
 * recognition by headers, and the default scheme's X-Signature primitives. Pure: no I/O, no clock
 * or randomness of its own.
 */
export { type BodyBytes, type SecretKey, sign, signingKey, verify } from "./x-signature.js";
export {
  SCHEME_NAMES,
  SCHEMES,
  schemeNamed,
  writtenHeaderNames,
  type Scheme,
  type SchemeName,
  type SecretFormat,
  type SignatureHeader,
  type SignedContent,
} from "./schemes.js";
export { schemeKeys, type SchemeKey } from "./secrets.js";
export { withBodyHash } from "./content.js";
export { derivedMessageId, recordedMessageId, usableMessageId } from "./message-ids.js";
export { messageId, signRequest, type SignedRequest, type SignInput } from "./sign.js";
export {
  describeSkew,
  verifySignature,
  type VerifyInput,
  type RefusalReason,
  type Refused,
  type RequestHeaders,
  type Verification,
  type Verified,
  type VerifyOptions,
} from "./verify.js";
export {
  carriesScheme,
  keyTable,
  recogniseSchemes,
  requestVerifier,
  verifyOrRefuse,
  type KeyTable,
  type NotRecognised,
  type RequestVerifier,
  type RequestVerifierOptions,
} from "./recognise.js";
