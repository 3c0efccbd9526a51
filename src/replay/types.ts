import type { EngineSettings } from "../delivery/deliver.js";
import type { FunctionDestination } from "../delivery/function-transport.js";
import type { Failure } from "../delivery/failure.js";
import type { AttemptEvent, DeliveryResult } from "../delivery/types.js";
import type { DispatchProgress } from "../dispatch/dispatcher.js";
import type { ResultLine } from "../regress/results.js";
import type { Clock } from "../util/clock.js";
import type { ReplayEntry } from "./envelope.js";
import type { Selection } from "./select.js";

/** What replay() takes and what it returns (replay.ts runs the two passes). */

export interface ReplayOptions {
  /** The file to read (stdin is spooled to a file by the caller). */
  path: string;
  /** How errors name the input: the path, or `stdin`. */
  name: string;
  settings: EngineSettings;
  /** The destination functions among the targets, under their URLs (docs/functions.md#as-a-destination). */
  functions?: ReadonlyMap<string, FunctionDestination> | undefined;
  /** A function uses a package that is not installed here: the caller stops the run. */
  onSetupProblem?: ((problem: string, file: string) => void) | undefined;
  timeoutMs?: number | undefined;
  retryWindowMs?: number | undefined;
  /** `standard`: Standard Webhooks' retry schedule (docs/schemes.md#retries) instead of the destination's. */
  retryRules?: "destination" | "standard" | undefined;
  ca?: readonly string[] | undefined;
  concurrency?: number | undefined;
  rate?: number | undefined;
  speed?: number | undefined;
  /**
   * Which lines are sent (--line, --message-id, --user-id, --type, --shard; lines left out are
   * counted as filtered) and the first line considered (--from-line, to resume): assembled once by
   * the caller (replay's command shares it with --compare). Default: every line.
   */
  selection?: Selection | undefined;
  /** Append one results line per finished message to this file, in input order (replay --results). */
  results?: string | undefined;
  /** Results lines as they are released, in input order (replay --compare); asks for the answers like `results`. */
  onResults?: ((lines: readonly ResultLine[]) => void) | undefined;
  skipInvalid?: boolean | undefined;
  /** A run that would send nothing is not an error (docs/exit-codes.md#nothing-to-send). */
  allowEmpty?: boolean | undefined;
  deadLetter?: string | undefined;
  dryRun?: boolean | undefined;
  signal?: AbortSignal | undefined;
  clock?: Clock | undefined;
  /** Send lines that are not known messages as read (replay --raw): they become warnings, not bad lines. */
  raw?: boolean | undefined;
  /** Under `dryRun`: each message that would be sent, in file order (nothing is sent). */
  onDryRun?: ((entry: ReplayEntry) => void) | undefined;
  /** A bad line, reported as found. */
  onInvalid?: ((line: number, reason: string) => void) | undefined;
  /** Under `raw`: a line that is not a known message, sent anyway. */
  onWarning?: ((line: number, reason: string) => void) | undefined;
  /** A message that was not delivered (finally failed, or interrupted: then `failure.reason` is "interrupted"). */
  onFailure?: ((entry: ReplayEntry, result: DeliveryResult | undefined, failure: Failure) => void) | undefined;
  /** Every finished message, for per-message reports (JUnit). */
  onMessage?: ((entry: ReplayEntry, result: DeliveryResult | undefined, ms: number) => void) | undefined;
  /** Sending starts: live counts for a status line, read as often as the caller likes. */
  onSending?: ((progress: () => DispatchProgress) => void) | undefined;
  /** After each attempt of a message (replay --verbose, the retry-window notice). */
  onAttempt?: ((entry: ReplayEntry, event: AttemptEvent) => void) | undefined;
  /** Keep response headers and bodies in the attempt events (--verbose shows them). */
  keepResponse?: boolean | undefined;
}

export interface ReplaySummary {
  /** Lines read, blank ones included. */
  lines: number;
  /** Valid messages from --from-line on that pass the selectors (--type, --line, …). */
  messages: number;
  invalid: number;
  filtered: number;
  /** Handed to the delivery engine. */
  sent: number;
  delivered: number;
  /** Skipped by a destination function (no handler, or EventNotSupported): done, not dead-lettered, no failure. */
  skipped: number;
  /** Finally failed (dead-lettered when --dead-letter is given). */
  failed: number;
  /** Not delivered because of the interruption (never dead-lettered: they are at or after the resume line). */
  interrupted: number;
  /** Delivered or failed after more than one round. */
  retried: number;
  deadLettered: number;
  p50Ms: number;
  p99Ms: number;
  elapsedMs: number;
  eventsPerSecond: number;
  dryRun: boolean;
  /** Set when interrupted: the low-water --from-line (docs/recording.md#resume); resuming there may repeat, never skip. */
  resumeLine: number | undefined;
  /** Lines after `resumeLine` already delivered (resuming sends them again). */
  deliveredAfterResume: number;
  /**
   * What stopped the sending pass part way (a dead-letter or results file that cannot be
   * written, the input unreadable): the run ended like an interruption, with `resumeLine` set.
   */
  error?: { value: unknown };
}
