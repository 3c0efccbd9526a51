import { Agent, request } from "undici";
import { keepBody, MAX_KEPT_BODY_BYTES } from "../delivery/captured-body.js";
import { validateUrl } from "../config/checks.js";
import { formatDuration } from "../util/duration.js";
import type { BodyBudget } from "../http/limits.js";
import { redactResponseHeaders } from "../safe-text/redact.js";

/** What to do instead of user:password@ in a --forward-to URL: listen relays the sender's headers, Authorization included. */
const RELAYED_CREDENTIALS = "listen would not send them; have the sender send them as a header (send --header 'Authorization: Basic …'), which listen relays";
/** The app gets as long as the destination gives a receiver (docs/delivery.md#timeout). */
const DEFAULT_FORWARD_TIMEOUT_MS = 5_000;
/** The app's answer is buffered to relay it; a larger one is refused rather than held in memory. */
export const MAX_RELAYED_BODY = 8 * 1024 * 1024;
/** Why a relay was aborted: its deadline, or the receiver stopping. */
const TIMED_OUT = Symbol("timed out");
const INTERRUPTED = Symbol("interrupted");
/** The Retry-After (seconds) of listen's 503s while it stops: it is usually started again soon. */
export const STOPPING_RETRY_AFTER_S = 5;

// RFC 9110 7.6.1: these describe one connection, not the message, so a relay drops them.
// Host and Content-Length are set for the new connection; undici refuses Expect.
const NOT_RELAYED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);

export interface ForwardRequest {
  /** As received: POST, PUT or PATCH. */
  method: string;
  /** Aborted when the receiver stops: the relay is cut short and answered as interrupted. */
  signal?: AbortSignal;
  /** node:http's `rawHeaders`: names as sent, in order, repeated names kept. */
  rawHeaders: readonly string[];
  body: Buffer;
  /**
   * The receiver's budget for bodies in memory: the app's answer takes from it
   * as it arrives, and is refused (503) past it. When the answer is the app's,
   * the caller gives `body.length` back once the answer is sent.
   */
  budget?: BodyBudget;
}

export interface ForwardResult {
  /** The app's status, or ours (502 app unreachable, 504 app too slow) when it gave none. */
  status: number;
  /** false when the status, headers and body are ours, not the app's. */
  fromApp: boolean;
  ms: number;
  /** The app's headers minus hop-by-hop ones (ours: content-type, and retry-after when interrupted). */
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** Why the app gave no answer (`interrupted` when listen stopped first), or null. */
  error: string | null;
}

export interface Forwarder {
  readonly url: string;
  forward(request: ForwardRequest): Promise<ForwardResult>;
  /** Interrupts the relays in flight (each resolves with interruptedAnswer), then closes the connections. */
  close(): Promise<void>;
}

/**
 * The relay of `listen --forward-to`: one received request, one request to the
 * app, exact body bytes and end-to-end headers (the sender's X-Signature
 * included). It uses undici directly, not the delivery engine: the engine
 * signs and retries messages, while a relay must neither re-sign nor retry;
 * the sender's own retries decide what happens after a failure.
 */
export function createForwarder(url: string, options: { timeoutMs?: number | undefined } = {}): Forwarder {
  // A relay adds nothing to the sender's request, so credentials in the URL would be dropped, not sent.
  const target = new URL(validateUrl(url, { field: "forwardTo" }, RELAYED_CREDENTIALS));
  const timeoutMs = options.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  const agent = new Agent({ keepAliveTimeout: 10_000, connectTimeout: timeoutMs, headersTimeout: 0, bodyTimeout: 0 });
  const shown = target.href;

  // Each relay in flight, so that close() can interrupt them all.
  const inFlight = new Set<AbortController>();
  let closed = false;

  const forward = async (input: ForwardRequest): Promise<ForwardResult> => {
    if (closed || input.signal?.aborted) return interruptedAnswer(0);
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const relay = new AbortController();
    const timer = setTimeout(() => relay.abort(TIMED_OUT), timeoutMs);
    const interrupt = (): void => relay.abort(INTERRUPTED);
    input.signal?.addEventListener("abort", interrupt, { once: true });
    inFlight.add(relay);
    try {
      const response = await request(target, {
        dispatcher: agent,
        // The sender's method (POST, PUT or PATCH): a relay changes nothing of the request.
        method: input.method as "POST" | "PUT" | "PATCH",
        headers: relayedHeaders(input.rawHeaders),
        body: input.body,
        signal: relay.signal,
      });
      const body = await readCapped(response.body, input.budget);
      return { status: response.statusCode, fromApp: true, ms: elapsed(), headers: relayedResponseHeaders(response.headers), body, error: null };
    } catch (error) {
      return failedRelay(error, { signal: relay.signal, ms: elapsed(), budget: input.budget, timeoutMs, shown });
    } finally {
      clearTimeout(timer);
      input.signal?.removeEventListener("abort", interrupt);
      inFlight.delete(relay);
    }
  };

  const close = (): Promise<void> => {
    closed = true;
    for (const relay of inFlight) relay.abort(INTERRUPTED);
    return agent.close();
  };

  return { url: shown, forward, close };
}

/** listen's own answer when a relay failed: interrupted (503), the app's answer over the budget (503), no answer in time (504), unreachable (502). */
function failedRelay(
  error: unknown,
  relay: { signal: AbortSignal; ms: number; budget: ForwardRequest["budget"]; timeoutMs: number; shown: string },
): ForwardResult {
  const { ms, budget, shown } = relay;
  if (relay.signal.reason === INTERRUPTED) return interruptedAnswer(ms);
  if ((error as { code?: unknown } | null)?.code === OVER_BUDGET && budget) {
    const bound = `listen's ${budget.describe()}`;
    const reason = `answer not relayed: it would pass ${bound}`;
    return {
      ...ourAnswer(503, ms, reason, { error: `the app's answer was not relayed: it would pass ${bound}; retry later`, reason }),
      headers: { "content-type": "application/json", "retry-after": "1" },
    };
  }
  if (relay.signal.aborted) {
    const reason = `no answer within ${formatDuration(relay.timeoutMs)}`;
    return ourAnswer(504, ms, reason, { error: `the app at ${shown} did not answer in time`, reason });
  }
  const reason = failureReason(error);
  return ourAnswer(502, ms, reason, { error: `the app at ${shown} could not be reached`, reason });
}

/**
 * listen's answer for a relay cut short by its stop (or one not started: held by --delay):
 * 503 with Retry-After, so the sender retries rather than seeing a reset.
 */
export function interruptedAnswer(ms: number): ForwardResult {
  const answer = ourAnswer(503, ms, "interrupted", { error: "listen stopped before the app answered", reason: "interrupted" });
  return { ...answer, headers: { ...answer.headers, "retry-after": String(STOPPING_RETRY_AFTER_S) } };
}

/** The `response` of a recording line (docs/recording.md#forwarded-response): status, ms, headers (credentials redacted), body or its hash. */
export function recordedResponse(result: ForwardResult): Record<string, unknown> {
  if (!result.fromApp) return { status: null, ms: result.ms, error: result.error };
  const headers = redactResponseHeaders(result.headers);
  const fields: Record<string, unknown> = { status: result.status, ms: result.ms, headers };
  const kept = keepBody(result.body);
  // A small body that is not UTF-8 is kept whole too, as base64 (results files keep only its digest).
  if ("bodySha256" in kept && result.body.length < MAX_KEPT_BODY_BYTES) fields["bodyBase64"] = result.body.toString("base64");
  else Object.assign(fields, kept);
  return fields;
}

function ourAnswer(status: number, ms: number, error: string, body: Record<string, string>): ForwardResult {
  return { status, fromApp: false, ms, headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify(body)), error };
}

/**
 * A message's headers as a flat [name, value, …] list, minus hop-by-hop ones and those named in
 * its Connection header: the sender's going to the app, and the app's coming back.
 */
export function relayedHeaders(raw: readonly string[]): string[] {
  const dropped = new Set(NOT_RELAYED);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== "connection") continue;
    for (const name of (raw[i + 1] as string).split(",")) dropped.add(name.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!dropped.has((raw[i] as string).toLowerCase())) out.push(raw[i] as string, raw[i + 1] as string);
  }
  return out;
}

/** The app's headers (undici's lower-case record) as relayed to the sender: through relayedHeaders. */
function relayedResponseHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const flat: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) flat.push(name, one);
  }
  const relayed = relayedHeaders(flat);
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < relayed.length; i += 2) {
    const name = relayed[i] as string;
    const value = relayed[i + 1] as string;
    const previous = out[name];
    if (previous === undefined) out[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else out[name] = [previous, value];
  }
  return out;
}

const OVER_BUDGET = "OVER_BUDGET";

/** Buffers the app's answer, within MAX_RELAYED_BODY and the budget; on failure gives back what it took. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, budget: BodyBudget | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size + chunk.length > MAX_RELAYED_BODY) throw Object.assign(new Error(`the app's answer is over ${MAX_RELAYED_BODY} bytes`), { code: "TOO_LARGE" });
      if (budget && !budget.take(chunk.length, size + chunk.length)) throw Object.assign(new Error("bodies in memory are over budget"), { code: OVER_BUDGET });
      size += chunk.length;
      chunks.push(chunk);
    }
  } catch (error) {
    body.destroy();
    budget?.give(size);
    throw error;
  }
  return Buffer.concat(chunks, size);
}

function failureReason(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (code === "ECONNREFUSED") return "connection refused (ECONNREFUSED): is the app running?";
    if (typeof code === "string" && !code.startsWith("UND_ERR_SOCKET")) return `${String(message)} (${code})`;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}
