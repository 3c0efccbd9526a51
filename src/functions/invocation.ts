import { AsyncLocalStorage } from "node:async_hooks";
import type { Clock } from "../util/clock.js";
import type { Settled } from "./outcome.js";
import type { ConsoleEntry, EmittedMessage, FetchRecord, SetObject } from "./types.js";

/** Console text kept per invocation; the editor's Test tab shows 4 KB, this keeps more for a terminal. */
const MAX_LOG_CHARS = 64 * 1024;
/** Fetches recorded per invocation; past it they run but are only counted. */
const MAX_FETCH_RECORDS = 1000;
/** `Segment.*` calls per invocation: a guard against a runaway loop, not a service limit. */
export const MAX_EMITTED = 10_000;

/**
 * What one invocation collects while it runs. The function's globals (console, fetch, Segment)
 * find the invocation they belong to through `activeInvocation` (AsyncLocalStorage), so
 * concurrent invocations of one function (serve, replay) never mix their output.
 */
export class InvocationState {
  readonly logs: ConsoleEntry[] = [];
  logsDropped = 0;
  private logChars = 0;
  readonly fetches: FetchRecord[] = [];
  fetchesDropped = 0;
  readonly messages: EmittedMessage[] = [];
  /** Each message's size as JSON, in bytes (the Tracking API takes up to 32 KB). */
  readonly messageSizes: number[] = [];
  readonly objects: SetObject[] = [];
  // Made on the first fetch: most invocations make none, and an AbortController (and its abort) costs.
  #controller: AbortController | undefined;
  /** Settled (or out of time): what it does from now on is not its result. */
  ended = false;
  /** While it runs: a promise of its own rejected and not handled fails it (set by runInvocation). */
  onRejected: ((reason: unknown) => void) | undefined;
  /** Such a rejection after it ended. */
  afterEnd: ((reason: unknown) => void) | undefined;

  addLog(entry: ConsoleEntry): void {
    if (this.ended) return;
    if (this.logChars + entry.text.length > MAX_LOG_CHARS) {
      this.logsDropped += 1;
      return;
    }
    this.logChars += entry.text.length;
    this.logs.push(entry);
  }

  addFetch(record: FetchRecord): void {
    if (this.fetches.length < MAX_FETCH_RECORDS) this.fetches.push(record);
    else this.fetchesDropped += 1;
  }

  /** A `Segment.*` message, kept as the JSON it would be sent as: later changes to the function's object do not reach it. */
  emit(message: EmittedMessage): void {
    const json = JSON.stringify(message);
    this.messages.push(JSON.parse(json));
    this.messageSizes.push(Buffer.byteLength(json));
  }

  /** A promise made in this invocation was rejected and nobody handled it. */
  reject(reason: unknown): void {
    if (!this.ended && this.onRejected) this.onRejected(reason);
    else this.afterEnd?.(reason);
  }

  /** Aborted when the invocation ends: its fetches still in flight are cut. */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.ended && !this.#controller.signal.aborted) this.#controller.abort(new Error("the invocation has ended"));
    return this.#controller.signal;
  }

  end(): void {
    this.ended = true;
    this.#controller?.abort(new Error("the invocation has ended"));
  }
}

export const activeInvocation = new AsyncLocalStorage<InvocationState>();

/** How a run is bounded and how a throw is described (the caller knows the file and the context's classes). */
export interface RunLimits {
  clock: Clock;
  limitMs: number;
  describeThrow: (error: unknown) => Settled;
}

/**
 * Calls `call` as one invocation on `state` and settles with how it ended: its return, its throw,
 * or the time limit on the clock (the handler may go on in the background: it is cut off from
 * the result and its fetches are aborted). A handler that never yields blocks the thread, which
 * no timer can stop (docs/functions.md#limits).
 */
export function runInvocation(state: InvocationState, call: () => unknown, limits: RunLimits): Promise<Settled> {
  const { clock, limitMs, describeThrow } = limits;
  return new Promise<Settled>((resolve) => {
    let done = false;
    const finish = (settled: Settled): void => {
      if (done) return;
      done = true;
      clock.clearTimeout(timer);
      state.end();
      resolve(settled);
    };
    const timer = clock.setTimeout(() => finish({ kind: "timeout", limitMs }), limitMs);
    // As the service's instance ends on one, an unhandled rejection fails the invocation.
    state.onRejected = (reason) => {
      state.addLog({ level: "error", text: "Unhandled promise rejection: the invocation fails with it" });
      finish(describeThrow(reason));
    };
    activeInvocation.run(state, () => {
      try {
        Promise.resolve(call()).then(
          (value) => finish({ kind: "returned", value }),
          (error: unknown) => finish(describeThrow(error)),
        );
      } catch (error) {
        finish(describeThrow(error));
      }
    });
  });
}
