import * as nodeCrypto from "node:crypto";
import { type Context, createContext, runInContext } from "node:vm";
import { Headers, Request, Response } from "undici";
import type { Clock } from "../util/clock.js";
import { functionCache } from "./cache.js";
import type { LogSink } from "./console.js";
import { captureConsole } from "./console.js";
import { functionFetch, type FunctionFetchOptions } from "./fetch.js";
import { activeInvocation } from "./invocation.js";
import { FunctionRequest } from "./request.js";
import { segmentGlobal } from "./segment.js";
import { installProvidedGlobals } from "./third-party.js";
import { ERROR_CLASSES_SCRIPT, type FunctionErrorClasses } from "./thrown.js";
import { FunctionTimers } from "./timers.js";
import type { FetchRecord } from "./types.js";

export interface ContextDependencies {
  clock: Clock;
  fetch: Omit<FunctionFetchOptions, "current" | "atLoad" | "clock">;
  /** Directories the third-party globals are resolved from, in order. */
  resolveFrom: readonly string[];
  /** What the function logs or fetches outside any invocation (its top-level code). */
  atLoad: { log: LogSink; fetch: (record: FetchRecord) => void };
}

export interface FunctionContext {
  context: Context;
  classes: FunctionErrorClasses;
  timers: FunctionTimers;
}

/**
 * A new context holding the runtime's globals (docs/functions.md#globals): web-standard fetch
 * and friends, `atob`/`btoa` as the service's packages behave, Node's `crypto` and `Buffer`, a
 * captured `console`, timers on the runtime's clock, the error classes (made inside the
 * context), `Segment`, `cache`, and the third-party globals, loaded on first use.
 *
 * Not a security boundary: `node:vm` only gives the function its own globals. It is the user's
 * own code, run with the user's rights, as the service's shim says of itself too.
 */
export function createFunctionContext(deps: ContextDependencies): FunctionContext {
  const current = () => activeInvocation.getStore();
  const log = captureConsole(current, deps.atLoad.log);
  const timers = new FunctionTimers(deps.clock, (error) => log["error"]?.("Uncaught error in a timer callback:", error));
  const globals: Record<string, unknown> = {
    fetch: functionFetch({ ...deps.fetch, current, atLoad: deps.atLoad.fetch, clock: deps.clock }),
    Request,
    Response,
    Headers,
    URL,
    URLSearchParams,
    atob: serviceAtob,
    btoa: serviceBtoa,
    crypto: nodeCrypto,
    Buffer,
    console: log,
    ...timers.globals(),
    TextEncoder,
    TextDecoder,
    AbortController,
    AbortSignal,
    structuredClone,
    queueMicrotask,
    ServerRequest: FunctionRequest,
    cache: functionCache(deps.clock),
  };
  installProvidedGlobals(globals, deps.resolveFrom);
  const context = createContext(globals, { name: "function" });
  const classes = runInContext(ERROR_CLASSES_SCRIPT, context) as FunctionErrorClasses;
  Object.assign(context, classes);
  context["Segment"] = segmentGlobal(current, classes.ValidationError);
  context["window"] = runInContext("globalThis", context);
  return { context, classes, timers };
}

/** The service's `btoa` (the npm package, not WHATWG): the string's code units as bytes, so a character past U+00FF keeps its low byte instead of throwing. */
function serviceBtoa(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString("base64");
  return Buffer.from((value as { toString(): string }).toString(), "latin1").toString("base64");
}

/** The service's `atob` (the npm package): lenient, never throws on characters outside base64. */
function serviceAtob(value: unknown): string {
  return Buffer.from(String(value), "base64").toString("latin1");
}
