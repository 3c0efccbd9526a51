import { type Dispatcher, fetch as undiciFetch, Headers, Request, type RequestInit, type Response } from "undici";
import { type SecretKey, sign } from "../signing/x-signature.js";
import type { Clock } from "../util/clock.js";
import type { InvocationState } from "./invocation.js";
import type { FetchRecord } from "./types.js";

/** The header that carries the URL a function asked for, on a request sent to `--function-egress` instead. */
const EGRESS_URL_HEADER = "x-function-fetch-url";

/** Where a function's requests go instead of where it sends them (docs/functions.md#egress). */
export interface Egress {
  url: URL;
  /** Sign each request's body (`X-Signature`), so a `listen` with the same secret takes it as valid. */
  secret?: SecretKey | undefined;
}

export interface FunctionFetchOptions {
  /** All requests go here instead, their own URL in `X-Function-Fetch-Url`. */
  egress?: Egress | undefined;
  /** undici's connection pool for the function's requests (closed with the function). */
  dispatcher: Dispatcher;
  /** The invocation a call belongs to; undefined at load. */
  current: () => InvocationState | undefined;
  /** Where a fetch made at load (top-level code) is recorded. */
  atLoad: (record: FetchRecord) => void;
  /** The clock of node-fetch's `timeout` option. */
  clock: Clock;
}

type NodeFetchInit = RequestInit & { timeout?: unknown };

/**
 * The function's `fetch`: undici's WHATWG fetch (the project's one HTTP client) wrapped so that
 * every call is recorded with its invocation (method, URL, status, time), optionally sent to an
 * egress URL instead, cut when its invocation ends, and given node-fetch's `timeout` option,
 * which the service's node-fetch honours and WHATWG fetch would ignore.
 */
export function functionFetch(options: FunctionFetchOptions): (input: unknown, init?: NodeFetchInit) => Promise<Response> {
  return async (input, init) => {
    const invocation = options.current();
    const request = new Request(input as string, init);
    const record: FetchRecord = { method: request.method, url: request.url, status: null, ms: 0 };
    if (options.egress) record.sentTo = options.egress.url.href;
    const signals = [request.signal];
    if (invocation) signals.push(invocation.signal);
    const timeout = typeof init?.timeout === "number" && init.timeout > 0 ? timeoutSignal(options.clock, init.timeout, request.url) : undefined;
    if (timeout) signals.push(timeout.signal);
    const signal = AbortSignal.any(signals);
    const started = performance.now();
    try {
      if (invocation?.ended) throw new Error("the invocation has ended: its requests are not sent");
      const response = await undiciFetch(await outgoing(request, options.egress, signal), { dispatcher: options.dispatcher });
      record.status = response.status;
      return response;
    } catch (error) {
      record.error = failureOf(error, signal);
      throw error;
    } finally {
      timeout?.clear();
      record.ms = Math.round((performance.now() - started) * 10) / 10;
      if (invocation) invocation.addFetch(record);
      else options.atLoad(record);
    }
  };
}

/** The request as sent: to the egress URL (same method, headers and body; the original URL in a header; signed when asked), or as asked. */
async function outgoing(request: Request, egress: Egress | undefined, signal: AbortSignal): Promise<Request> {
  if (!egress) return new Request(request, { signal });
  const headers = new Headers(request.headers);
  headers.set(EGRESS_URL_HEADER, request.url);
  let body: Request["body"] | Buffer = request.body;
  if (egress.secret !== undefined) {
    const bytes = Buffer.from(await request.arrayBuffer());
    headers.set("x-signature", sign(egress.secret, bytes));
    body = request.body === null ? null : bytes;
  }
  return new Request(egress.url, { method: request.method, headers, body, duplex: "half", redirect: request.redirect, signal });
}

/** node-fetch's `timeout`: aborts with the error node-fetch gives (a FetchError "network timeout at: URL"). */
function timeoutSignal(clock: Clock, ms: number, url: string): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const error = Object.assign(new Error(`network timeout at: ${url}`), { name: "FetchError", type: "request-timeout" });
  const timer = clock.setTimeout(() => controller.abort(error), ms);
  return { signal: controller.signal, clear: () => clock.clearTimeout(timer) };
}

/** Why no response came: the cause undici wraps in its "fetch failed", or the abort's reason. */
function failureOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) {
    const reason = signal.reason as { name?: string; message?: string } | undefined;
    return reason?.name === "FetchError" ? (reason.message ?? "network timeout") : `aborted: ${reason?.message ?? "aborted"}`;
  }
  const cause = (error as { cause?: { message?: unknown } }).cause;
  if (cause && typeof cause.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}
