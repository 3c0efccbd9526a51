import { dirname, resolve } from "node:path";
import { runInContext } from "node:vm";
import { Agent, type Dispatcher } from "undici";
import { InputError, UsageError } from "../errors.js";
import { type Clock, realClock } from "../util/clock.js";
import { readRegularFile } from "../util/readable-file.js";
import type { Egress } from "./fetch.js";
import { createFunctionContext, type FunctionContext } from "./globals.js";
import { InvocationState, runInvocation } from "./invocation.js";
import { type Handler, loadHandlers } from "./loader.js";
import { batchOutcomes, outcomeOf, type Settled, sourceOutcome } from "./outcome.js";
import type { FunctionRequest } from "./request.js";
import type { FunctionSettings } from "./settings.js";
import { classOfThrown, describeThrown } from "./thrown.js";
import { watchRejections } from "./unhandled.js";
import { type BatchRecord, EVENT_HANDLERS, type FunctionKind, type HandlerName, type InvocationRecord, type Outcome, type ThrownInfo } from "./types.js";

/** The service's execution limit per invocation (docs/functions.md#limits). */
export const FUNCTION_LIMIT_MS = 5000;
/** The most events the service puts in one `onBatch` call (20 by default, up to 400 on request). */
const MAX_BATCH_EVENTS = 400;
const DEFAULT_BATCH_EVENTS = 20;
/** Late rejections kept per function. */
const MAX_LATE = 100;

export interface FunctionOptions {
  /** The per-invocation limit; the service's 5 s by default. */
  limitMs?: number | undefined;
  /** Time for the limit, the function's timers, `cache` TTLs and fetch's `timeout` (a VirtualClock in tests). */
  clock?: Clock | undefined;
  /** Every `fetch` goes to this URL instead (docs/functions.md#egress), signed when it has a secret. */
  egress?: Egress | undefined;
  /** Where third-party globals are looked for, in order (default: the file's directory, then `cwd`). */
  resolveFrom?: readonly string[];
  /** The connection pool for the function's requests (default: its own undici Agent, closed with it). */
  dispatcher?: Dispatcher;
}

/** A function file is code: this much at most (docs/security.md#files-named-by-options). */
const MAX_FUNCTION_FILE_BYTES = 8 * 1024 * 1024;

/** Reads and loads a function file (`file` as the user named it, resolved from `cwd`): a regular file within its bound. */
export function loadFunction(file: string, cwd: string, options: FunctionOptions = {}): FunctionModule {
  const path = resolve(cwd, file);
  const code = readRegularFile(path, { file }, MAX_FUNCTION_FILE_BYTES).toString("utf8");
  return new FunctionModule(code, file, { ...options, resolveFrom: options.resolveFrom ?? [dirname(path), cwd] });
}

/**
 * One loaded function (docs/functions.md): its own context, loaded once, its top-level state
 * kept across invocations as the service keeps a warm instance. Each `run…` is one invocation,
 * bounded by the limit, and resolves with everything it did (never rejects for what the
 * function does). Concurrent invocations are kept apart.
 */
export class FunctionModule {
  readonly kind: FunctionKind;
  /** What the top-level code logged and fetched while loading. */
  readonly atLoad = new InvocationState();
  private readonly handlers: ReadonlyMap<HandlerName, Handler>;
  private readonly runtime: FunctionContext;
  private readonly clock: Clock;
  private readonly limitMs: number;
  private readonly ownDispatcher: Agent | undefined;
  private closed = false;
  /** Rejections of the function's own promises nobody handled, outside a running invocation (bounded). */
  readonly late: ThrownInfo[] = [];
  private readonly unwatch: () => void;

  constructor(
    code: string,
    readonly file: string,
    options: FunctionOptions = {},
  ) {
    // Timers that hold the process, as Node's own do: an invocation waiting on one (the limit's,
    // or the function's setTimeout) must not let `function run` exit under it.
    this.clock = options.clock ?? realClock({ keepAlive: true });
    this.limitMs = options.limitMs ?? FUNCTION_LIMIT_MS;
    this.ownDispatcher = options.dispatcher ? undefined : new Agent({ connections: 16 });
    const dispatcher = options.dispatcher ?? (this.ownDispatcher as Agent);
    this.runtime = createFunctionContext({
      clock: this.clock,
      fetch: { dispatcher, egress: options.egress },
      resolveFrom: options.resolveFrom ?? [process.cwd()],
      atLoad: { log: (entry) => this.atLoad.addLog(entry), fetch: (record) => this.atLoad.addFetch(record) },
    });
    this.unwatch = watchRejections({
      promisePrototype: runInContext("Promise.prototype", this.runtime.context) as object,
      late: (reason) => this.lateRejection(reason),
    });
    try {
      const loaded = loadHandlers(code, file, this.runtime.context, this.limitMs);
      this.kind = loaded.kind;
      this.handlers = loaded.handlers;
    } catch (error) {
      void this.close();
      throw error;
    }
  }

  has(handler: HandlerName): boolean {
    return this.handlers.has(handler);
  }

  /**
   * The events per `onBatch` call (docs/functions.md#batches): `given` (1 calls the single-event
   * handlers), else the service's 20 when the function has onBatch, else 1. More than 1 without
   * onBatch, or more than 400, is a UsageError.
   */
  batchSize(given: number | undefined): number {
    const hasBatch = this.handlers.has("onBatch");
    if (given !== undefined && given > 1 && !hasBatch) {
      throw new UsageError(`${this.file} has no onBatch handler: its events go to onTrack, onIdentify, … one at a time`, { field: "batchSize" });
    }
    if (given !== undefined && given > MAX_BATCH_EVENTS)
      throw new UsageError(`a function's batch holds at most ${MAX_BATCH_EVENTS} events, not ${given}`, { field: "batchSize" });
    return given ?? (hasBatch ? DEFAULT_BATCH_EVENTS : 1);
  }

  /** One event to its type's handler; an unknown type or a missing handler is skipped, as the service skips it. */
  async runEvent(event: unknown, settings: FunctionSettings): Promise<InvocationRecord> {
    this.expect("destination");
    const type = (event as { type?: unknown } | null)?.type;
    const name = typeof type === "string" && Object.hasOwn(EVENT_HANDLERS, type) ? EVENT_HANDLERS[type as keyof typeof EVENT_HANDLERS] : undefined;
    const handler = name === undefined ? undefined : this.handlers.get(name);
    if (name === undefined || handler === undefined) {
      const reason = name === undefined ? `no handler for events of type ${JSON.stringify(type ?? null)}` : `no ${name} handler`;
      const settled: Settled = { kind: "missing", reason };
      return this.record(null, new InvocationState(), settled, outcomeOf(settled), 0);
    }
    return this.invoke(name, handler, [event, settingsCopy(settings)], outcomeOf);
  }

  /** Up to 400 events to `onBatch`, with one outcome per event (docs/functions.md#batches). */
  async runBatch(events: readonly unknown[], settings: FunctionSettings): Promise<BatchRecord> {
    this.expect("destination");
    const handler = this.handlers.get("onBatch");
    if (!handler) throw new InputError("has no onBatch handler", { file: this.file });
    if (events.length === 0 || events.length > MAX_BATCH_EVENTS) throw new RangeError(`a batch holds 1 to ${MAX_BATCH_EVENTS} events, not ${events.length}`);
    let perEvent: Outcome[] = [];
    const record = await this.invoke("onBatch", handler, [[...events], settingsCopy(settings)], (settled) => {
      perEvent = batchOutcomes(settled, events.length);
      return outcomeOf(settled);
    });
    return { ...record, events: perEvent };
  }

  /** One webhook to `onRequest`; its `Segment.*` calls count only when it succeeds (docs/functions.md#source-functions). */
  async runRequest(request: FunctionRequest, settings: FunctionSettings): Promise<InvocationRecord> {
    this.expect("source");
    const handler = this.handlers.get("onRequest") as Handler;
    return this.invoke("onRequest", handler, [request, settingsCopy(settings)], (settled, state) => sourceOutcome(settled, state.messageSizes));
  }

  /** Stops the timers the function left running and closes its connections; again, does nothing. */
  async close(): Promise<void> {
    this.runtime.timers.clearAll();
    if (this.closed) return;
    this.closed = true;
    this.unwatch();
    await this.ownDispatcher?.close();
  }

  private lateRejection(reason: unknown): void {
    if (this.late.length < MAX_LATE) this.late.push(describeThrown(reason, this.file));
  }

  private async invoke(
    name: HandlerName,
    handler: Handler,
    args: unknown[],
    outcome: (settled: Settled, state: InvocationState) => Outcome,
  ): Promise<InvocationRecord> {
    const state = new InvocationState();
    state.afterEnd = (reason) => this.lateRejection(reason);
    const started = performance.now();
    const settled = await runInvocation(state, () => handler(...args), {
      clock: this.clock,
      limitMs: this.limitMs,
      describeThrow: (error) => ({ kind: "threw", thrown: describeThrown(error, this.file), thrownClass: classOfThrown(error, this.runtime.classes) }),
    });
    return this.record(name, state, settled, outcome(settled, state), performance.now() - started);
  }

  private record(handler: HandlerName | null, state: InvocationState, settled: Settled, outcome: Outcome, ms: number): InvocationRecord {
    return {
      handler,
      outcome,
      ...(settled.kind === "returned" ? { returned: settled.value } : {}),
      ...(settled.kind === "threw" ? { thrown: settled.thrown } : {}),
      ...(settled.kind === "timeout" ? { thrown: { name: "Timeout", message: `did not finish within ${settled.limitMs / 1000} s`, isError: true } } : {}),
      // Copies: a request the handler left running may still end (aborted) after the record is made.
      logs: [...state.logs],
      logsDropped: state.logsDropped,
      fetches: [...state.fetches],
      fetchesDropped: state.fetchesDropped,
      messages: [...state.messages],
      objects: [...state.objects],
      ms: Math.round(ms * 10) / 10,
    };
  }

  private expect(kind: FunctionKind): void {
    if (this.kind === kind) return;
    const hint = kind === "source" ? "give it events, not a request" : "give it a request (--request FILE), not events";
    throw new InputError(`is a ${this.kind} function: ${hint}`, { file: this.file });
  }
}

/** A fresh copy of the settings for each invocation (a handler may change what it gets); none to make of none. */
function settingsCopy(settings: FunctionSettings): FunctionSettings {
  for (const _ in settings) return structuredClone(settings);
  return {};
}
