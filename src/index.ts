// The library's public face (docs/library.md): the client, signing in every scheme, the message
// types with their check, the receiver's verdict, and the delivery engine with its transport
// interface and retry contract. Everything else is internal; the client alone is `webhook-cli/client`
// (src/client.ts), test helpers are `webhook-cli/testing`. Re-exports only; test/e2e/public-face.test.ts
// lists every name, so a change here shows as a diff, and CHANGELOG.md says what semver promises of them.
// The declarations name Node.js types (Buffer, node:crypto, node:events): the .d.ts asks for
// @types/node itself, so a project whose tsconfig lists no "types" (what `tsc --init` writes, and
// TypeScript 6's default) resolves them. "preserve" keeps the directive in the emitted .d.ts.
/// <reference types="node" preserve="true" />

// Everything `webhook-cli/client` exports (docs/serve-api.md#client-library): the Analytics client,
// its call types (the outgoing webhook bodies are the *Message types below), the error base and
// the errors it raises, and the Clock and Random that its options and the engine's take.
export * from "./client.js";
// The errors of signing (the rest come with the client above).
export { SchemeError, SecretFormatError } from "./errors.js";

// Signing and verifying (docs/schemes.md). X-Signature, the destination's: sign, verify, and
// signingKey, which makes the key once for many bodies.
export { sign, verify, signingKey, type BodyBytes, type SecretKey } from "./signing/x-signature.js";
// Every scheme (Standard Webhooks, Svix, GitHub, Stripe, Shopify, Slack, Twilio and X-Signature) as
// data, read by the one signer and the one verifier; the secrets made into keys once.
export { SCHEMES, SCHEME_NAMES, type Scheme, type SchemeName, type SignatureHeader, type SignedContent, type SecretFormat } from "./signing/schemes.js";
export { schemeKeys, type SchemeKey } from "./signing/secrets.js";
export { signRequest, messageId, type SignInput, type SignedRequest } from "./signing/sign.js";
export {
  verifySignature,
  type VerifyInput,
  type VerifyOptions,
  type RequestHeaders,
  type Verification,
  type Verified,
  type Refused,
  type RefusalReason,
} from "./signing/verify.js";
export { recogniseSchemes, requestVerifier, type RequestVerifier, type RequestVerifierOptions, type NotRecognised } from "./signing/recognise.js";

// The webhook messages and their shape check.
export {
  MESSAGE_TYPES,
  isMessageType,
  type MessageType,
  type AliasKeys,
  type Message,
  type PageMessage,
  type ScreenMessage,
  type ScreenContext,
  type IdentifyMessage,
  type TrackMessage,
  type AliasMessage,
  type AliasMessageSpec,
  type AliasMessageCamel,
  type GroupMessage,
  type DeleteMessage,
} from "./messages/schemas.js";
export { checkMessage, type ShapeCheck, type ShapeIssue, type CheckOptions } from "./messages/check.js";

// The receiver's verdict on one request: signature, shape, diagnosis.
export { judgeRequest, type RequestVerdict, type VerdictOptions } from "./receiver/verdict.js";
export type { Diagnosis, DiagnosisCause } from "./receiver/diagnose.js";

// The delivery engine (docs/delivery.md): built by createDeliveryEngine, which loads it on first
// use (so the client above loads none of it); DeliveryEngine is its type.
export { createDeliveryEngine, type DeliveryEngineOptions } from "./delivery/create-engine.js";
export type { DeliveryEngine } from "./delivery/deliver.js";
export type { Destination, HttpMethod, Target } from "./config/destination.js";
export type { Mapping, MappingNode } from "./messages/mapping.js";
export type { RequestContent, SignatureRule } from "./delivery/actions-request.js";
export type {
  AttemptEvent,
  AttemptOutcome,
  DeliverCall,
  DeliveryResult,
  PreparedRequest,
  UrlResult,
} from "./delivery/types.js";
export type { CapturedResponse, KeptBody } from "./delivery/captured-body.js";
// What the engine needs from the network; `webhook-cli/testing` has a fake one.
export type { DeliveryTransport, SendOptions, AttemptReport } from "./delivery/transport.js";
// The retry contract (docs/delivery.md#retry-schedule): the rules as data, one row per sender, and
// the planner that reads them, as the engine does after every round. How the planner is made
// (classifying, backoff, the window) stays inside.
export { RETRY_RULES, type RetryRules } from "./delivery/retry-rules.js";
export { planNextRound, type NextRound, type NextRoundInput } from "./delivery/policy.js";
