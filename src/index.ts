// The library's public face: the client, signing, the message types with their
// check, and the receiver's verdict. Everything else is internal; test helpers
// are in the `webhook-cli/testing` subpath. Re-exports only.
export { WebhookCliError, ConfigError, ValidationError, ClosedError, type ErrorCode, type ErrorSource } from "./errors.js";

// The client library (docs/serve-api.md#client-library).
export { Analytics } from "./client/analytics.js";
export { BatchDeliveryError, QueueFullError } from "./client/errors.js";
export type {
  AnalyticsOptions,
  AnalyticsEvents,
  AnalyticsStats,
  FlushEvent,
  Callback,
  CallType,
  CommonFields,
  Identity,
  Integrations,
  // The client's call types; the outgoing webhook bodies keep the *Message names below.
  IdentifyMessage as IdentifyCall,
  TrackMessage as TrackCall,
  PageMessage as PageCall,
  ScreenMessage as ScreenCall,
  GroupMessage as GroupCall,
  AliasMessage as AliasCall,
} from "./client/types.js";
// What AnalyticsOptions' `clock` and `random` take.
export type { Clock, Random, TimerHandle } from "./util/clock.js";

// Signing and verifying X-Signature.
export { sign, verify, type BodyBytes } from "./signing.js";

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
export { judgeRequest, type RequestVerdict, type RequestHeaders, type VerdictOptions } from "./receiver/verdict.js";
export type { Diagnosis, DiagnosisCause } from "./receiver/diagnose.js";
