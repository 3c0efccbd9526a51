/**
 * What one run of a function produced (docs/functions.md). Pure data: the command prints it,
 * a transport of the delivery engine maps its `outcome`, serve queues a source's `messages`.
 */

/** The destination handler of each message type, as the service names them. */
export const EVENT_HANDLERS = {
  identify: "onIdentify",
  track: "onTrack",
  page: "onPage",
  screen: "onScreen",
  group: "onGroup",
  alias: "onAlias",
  delete: "onDelete",
} as const;

export type EventHandlerName = (typeof EVENT_HANDLERS)[keyof typeof EVENT_HANDLERS];
export type HandlerName = EventHandlerName | "onBatch" | "onRequest";
export const HANDLER_NAMES: readonly HandlerName[] = [...Object.values(EVENT_HANDLERS), "onBatch", "onRequest"];

/** The longest the service waits to fill an `onBatch` batch (docs/functions.md#batches). */
export const FUNCTION_BATCH_WAIT_MS = 10_000;

/** A destination function has `on<Type>` handlers (and maybe `onBatch`); a source function has `onRequest`. */
export type FunctionKind = "destination" | "source";

/** The service's names for why an invocation did not succeed (docs/functions.md#errors). */
export type ErrorType = "Unsupported Event Type" | "Message Rejected" | "Bad Request" | "Retry" | "Timeout" | "Message Too Large";

/**
 * How an invocation ended, as the service treats it: delivered; skipped (no handler, or
 * `EventNotSupported`: discarded, and counts as no failure); failed (discarded: nothing retries it);
 * retry (`RetryError` or the time limit: the service runs it again).
 */
export type Outcome =
  | { kind: "delivered" }
  | { kind: "skipped"; errorType: "Unsupported Event Type"; reason: string }
  | {
      kind: "failed";
      errorType: Exclude<ErrorType, "Retry" | "Timeout">;
      reason: string;
      /** The function could not run here as written (a package it uses is not installed): fix the setup, not the function. */
      setup?: true;
    }
  | { kind: "retry"; errorType: "Retry" | "Timeout"; reason: string };

/** What the function threw, or the time limit, described for people and for the outcome. */
export interface ThrownInfo {
  /** The class (`RetryError`, `TypeError`), or for a value that is not an Error its type (`string`, `object`) ; `Timeout` for the time limit. */
  name: string;
  message: string;
  /** False when a non-Error value was thrown (`throw "oops"`). */
  isError: boolean;
  /** `file:line:column` of the innermost frame in the function's file, when known. */
  location?: string;
}

export type ConsoleLevel = "log" | "info" | "warn" | "error" | "debug";

export interface ConsoleEntry {
  level: ConsoleLevel;
  text: string;
}

/** One `fetch` the function made. */
export interface FetchRecord {
  method: string;
  /** The URL the function asked for. */
  url: string;
  /** Where it was sent instead (`--function-egress`). */
  sentTo?: string;
  /** The response's status, or null when none arrived. */
  status: number | null;
  ms: number;
  /** Why no response arrived (`connect ECONNREFUSED 127.0.0.1:9`, `aborted`). */
  error?: string;
}

/** A `Segment.identify/track/page/screen/group/alias` call's message, as the function built it. */
export type EmittedMessage = { type: "identify" | "track" | "page" | "screen" | "group" | "alias" } & Record<string, unknown>;

/** A `Segment.set` object. */
export interface SetObject {
  collection: string;
  id: string;
  properties?: unknown;
}

/** Everything one invocation did. */
export interface InvocationRecord {
  /** The handler called, or null when the function has none for this input. */
  handler: string | null;
  outcome: Outcome;
  /** Present when the handler returned (its value, as returned). */
  returned?: unknown;
  /** Present when it threw or ran out of time. */
  thrown?: ThrownInfo;
  logs: ConsoleEntry[];
  /** Console output past the bound, not kept. */
  logsDropped: number;
  fetches: FetchRecord[];
  fetchesDropped: number;
  /** `Segment.*` calls, in order (source functions; a destination's are shown, never sent). */
  messages: EmittedMessage[];
  objects: SetObject[];
  ms: number;
}

/** An `onBatch` invocation: the batch's own record and one outcome per event, in order. */
export interface BatchRecord extends InvocationRecord {
  events: Outcome[];
}
