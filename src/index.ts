// The library's public API: re-exports only.
export * from "./errors.js";
export { sign, verify, type BodyBytes } from "./signing.js";
export * from "./messages/schemas.js";
export { checkMessage, isValidMessage, type ShapeCheck, type ShapeIssue, type CheckOptions } from "./messages/check.js";
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
  IdentifyMessage,
  TrackMessage,
  PageMessage,
  GroupMessage,
  AliasMessage,
} from "./client/types.js";
