// The library's public API: re-exports only.
export * from "./errors.js";
export { sign, verify, type BodyBytes } from "./signing.js";
export * from "./messages/schemas.js";
export { checkMessage, isValidMessage, userIdOf, type ShapeCheck, type ShapeIssue, type CheckOptions } from "./messages/check.js";
export { buildExamples, exampleMessage, type ExampleOptions } from "./messages/examples.js";
export {
  resolveSettings,
  loadConfig,
  configSchema,
  DEFAULT_USER_AGENT,
  MAX_TARGETS,
  type DestinationSettings,
  type Target,
  type Source,
  type ConfigFile,
} from "./settings.js";
export { systemClock, VirtualClock, seededRandom, sleep, type Clock, type Random, type TimerHandle } from "./util/clock.js";
export { parseDuration } from "./util/duration.js";
export { DeliveryEngine, type EngineSettings } from "./delivery/deliver.js";
export { undiciEngine, type UndiciEngineOptions } from "./delivery/wire.js";
export type { DeliveryTransport, AttemptReport } from "./delivery/transport.js";
export {
  classifyOutcome,
  parseRetryAfter,
  backoffCapMs,
  backoffMs,
  retryWaitMs,
  mayStartAt,
  planNextRound,
  honoursRetryAfter,
  type Verdict,
  type NextRound,
} from "./delivery/policy.js";
export * from "./delivery/types.js";
export { Analytics } from "./client/edge.js";
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
  // The client's call types; the outgoing webhook bodies keep the *Message names (messages/schemas).
  IdentifyMessage as IdentifyCall,
  TrackMessage as TrackCall,
  PageMessage as PageCall,
  ScreenMessage as ScreenCall,
  GroupMessage as GroupCall,
  AliasMessage as AliasCall,
} from "./client/types.js";
// The collection service stand-in (serve); better-sqlite3 loads only when openSqliteQueue is called.
export { Collector, type CollectorOptions, type CollectorCounts, type IngestRequest, type IngestResponse } from "./service/collector.js";
export { listenCollector, type ServeServer } from "./service/server.js";
export { MemoryQueue, openSqliteQueue, type MessageQueue, type NewMessage, type QueuedMessage, type FailedMessage, type SeenUser } from "./service/queue.js";
export { isDestinationEnabled, DESTINATION_NAME } from "./service/routing.js";
export { toMessage, deleteMessage, type TransformOptions } from "./service/transform.js";
export { type IngestCall, type Rejection } from "./service/ingest.js";
export { MAX_MESSAGE_BYTES, MAX_REQUEST_BYTES, MAX_BATCH_BYTES } from "./messages/limits.js";
export { snakeName, membershipChanges, type MembershipChange } from "./service/audience.js";
// replay: re-sign and deliver recorded NDJSON logs.
export { replay, type ReplayOptions, type ReplaySummary, type ReplayProgress } from "./replay/replay.js";
export { failureOf, type Failure } from "./delivery/failure.js";
export { DEFAULT_DELIVERY_CONCURRENCY } from "./dispatch/dispatcher.js";
export { parseEntry, checkLine, deadLetterLine, type ReplayEntry } from "./replay/envelope.js";
export { LineSplitter, readLineBatches, MAX_LINE_BYTES, type Line } from "./replay/ndjson.js";
// listen: the one request verifier and its receiver.
export { judgeRequest, type RequestVerdict, type RequestHeaders, type VerdictOptions } from "./receiver/verdict.js";
export { diagnoseSignature, type Diagnosis, type DiagnosisCause } from "./receiver/diagnose.js";
export { FaultPlan, parseScript, type FaultOptions, type FaultAction, type ScriptStep } from "./receiver/faults.js";
export { formatRecordLine, redactHeaders, RecordingFile, REDACTED, type RecordInput } from "./receiver/record.js";
export { startReceiver, MAX_BODY_BYTES, type Receiver, type ReceiverOptions, type ReceivedRequest } from "./receiver/server.js";
export { junitXml, type JunitSuite, type JunitCase, type JunitFailure } from "./report/junit.js";
