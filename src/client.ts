// `webhook-cli/client`: the Analytics client alone (docs/serve-api.md#client-library), for an app
// that loads it as it starts. `import { Analytics } from "webhook-cli"` gives the same class; this
// entry loads only the client (and undici, which it sends with): not the message schemas, zod, the
// verifier or the engine's door, which the package's main entry also loads.
// Re-exports only; test/e2e/public-face.test.ts lists every name.
/// <reference types="node" preserve="true" />
export { Analytics } from "./client/analytics.js";
export {
  WebhookCliError,
  ConfigError,
  ValidationError,
  ClosedError,
  BatchDeliveryError,
  QueueFullError,
  type ErrorCode,
  type ErrorSource,
} from "./errors.js";
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
  IdentifyCall,
  TrackCall,
  PageCall,
  ScreenCall,
  GroupCall,
  AliasCall,
} from "./client/types.js";
export type { Clock, Random, TimerHandle } from "./util/clock.js";
