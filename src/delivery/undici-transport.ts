import { rootCertificates } from "node:tls";
import { Agent, type Dispatcher } from "undici";
import { onAbort } from "../util/abort-listeners.js";
import { formatDuration } from "../util/duration.js";
import { EXCERPT_BYTES, statusError, wantsExcerpt } from "./answer-excerpt.js";
import { BodyCapture, contentTypeOf } from "./captured-body.js";
import { parseRetryAfter } from "../util/retry-after.js";
import { isRedirect, nextHop, type Hop } from "./redirect.js";
import { tlsProblem } from "./tls-problem.js";
import type { AttemptReport, DeliveryTransport, SendOptions } from "./transport.js";
import type { AttemptOutcome, PreparedRequest } from "./types.js";

export interface UndiciTransportOptions {
  /** Extra trusted CA certificates (PEM), added to Node's default roots. */
  ca?: readonly string[];
  /** Keep-alive connections per origin. */
  connections?: number;
  /** The per-attempt deadline; undici's connect timeout is set to it so a stalled handshake is dropped too. */
  timeoutMs?: number;
}

// Enough of a response body for --verbose; the rest is read and dropped so the connection is reused.
const KEPT_BODY_BYTES = 16 * 1024;

/**
 * The outgoing HTTP adapter: one undici Agent, which keeps one keep-alive pool
 * per origin, reused across messages and attempts. Built once where a command
 * wires things, and handed to the engine.
 */
export class UndiciTransport implements DeliveryTransport {
  private readonly agent: Agent;
  private readonly locations = new Map<string, { origin: string; path: string } | { invalid: string }>();

  constructor(options: UndiciTransportOptions = {}) {
    const ca = options.ca && options.ca.length > 0 ? [...rootCertificates, ...options.ca] : undefined;
    this.agent = new Agent({
      connections: options.connections ?? 16,
      keepAliveTimeout: 10_000,
      // Our own deadline (in send) is the one reported; this one closes a stalled TCP/TLS connect.
      connectTimeout: options.timeoutMs ?? 10_000,
      headersTimeout: 0,
      bodyTimeout: 0,
      // Node's `ca` replaces the default store, so the roots are passed too. Verification stays on.
      connect: { rejectUnauthorized: true, ...(ca ? { ca } : {}) },
    });
  }

  /**
   * One request, by its method, with ONE deadline covering connect, TLS and the response head.
   * Never rejects: every failure is an outcome. Uses undici's dispatch
   * handler API directly: no response stream or promise per layer, which
   * matters when replay pushes thousands of messages a second.
   */
  send(request: PreparedRequest, options: SendOptions): Promise<AttemptReport> {
    const where = this.locate(request.url);
    if ("invalid" in where) return Promise.resolve({ outcome: { kind: "invalid", reason: where.invalid }, status: null, error: where.invalid, ms: 0 });
    return new Promise((resolve) => {
      const capture = options.captureResponse === true ? new BodyCapture() : undefined;
      const attempt = new Attempt(resolve, request.url, options.timeoutMs, options.keepResponse === true, capture);
      if (options.signal) attempt.cutBy(options.signal);
      attempt.start(this.agent, where.origin, where.path, request);
    });
  }

  /** Origin and path of a target URL, parsed once per URL rather than per attempt. */
  private locate(url: string): { origin: string; path: string } | { invalid: string } {
    let found = this.locations.get(url);
    if (!found) {
      try {
        const parsed = new URL(url);
        if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not an http: or https: URL");
        found = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      } catch (error) {
        found = { invalid: `invalid URL "${url}": ${(error as Error).message}` };
      }
      // At most 5 targets per destination; the bound only guards callers that vary targets per call.
      if (this.locations.size >= 1000) this.locations.clear();
      this.locations.set(url, found);
    }
    return found;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * One request's undici handler (the controller API). Settles once: with the status when the
 * response ends (its body read so the connection is reused), with a timeout when the deadline
 * passes before the head, or with the failure. undici does not settle a request while its
 * connect (TCP + TLS) is pending, so the deadline resolves on its own; undici's connect timeout
 * (set to the same deadline) then drops the stalled socket.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private settled = false;
  /** Stops listening for a cut, once settled. */
  private release: (() => void) | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: Record<string, string | string[]> | undefined;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  /** A 4xx answer's first bytes, for its error's excerpt (answer-excerpt.ts); one more than shown tells there is more. */
  private readonly answerStart: Buffer[] = [];
  private answerStartBytes = 0;
  /** Following redirects (Webhooks (Actions)): the request in flight, how many were followed, and the next one. */
  private hop: Hop | undefined;
  private hops = 0;
  private maxRedirects = 0;
  private agent: Agent | undefined;
  private following: Hop | undefined;

  constructor(
    private readonly resolve: (report: AttemptReport) => void,
    private readonly url: string,
    private readonly timeoutMs: number,
    /** Keep headers and body for the report (--verbose); otherwise only what the policy needs. */
    private readonly keepResponse: boolean,
    /** replay --results: the whole body, streamed (64 KiB kept, all of it hashed). */
    private readonly capture: BodyCapture | undefined,
  ) {
    this.timer = setTimeout(() => this.onDeadline(), timeoutMs);
  }

  start(agent: Agent, origin: string, path: string, request: PreparedRequest): void {
    const body = request.body.length > 0 ? request.body : null;
    if (request.followRedirects !== undefined && request.followRedirects > 0) {
      this.agent = agent;
      this.maxRedirects = request.followRedirects;
      this.hop = { url: request.url, method: request.method, headers: request.headers, body: body ?? undefined };
    }
    agent.dispatch({ origin, path, method: request.method, headers: request.headers, body }, this);
  }

  /** The next request of a redirect chain, under the same deadline (docs/actions.md#redirects). */
  private follow(hop: Hop): void {
    this.hop = hop;
    this.hops += 1;
    const url = new URL(hop.url);
    (this.agent as Agent).dispatch(
      { origin: url.origin, path: `${url.pathname}${url.search}`, method: hop.method, headers: hop.headers, body: hop.body ?? null },
      this,
    );
  }

  /** Aborts the attempt when `signal` does (a stop); it then settles at once. */
  cutBy(signal: AbortSignal): void {
    const onCut = (): void => {
      if (this.settled) return;
      this.settle({ outcome: { kind: "network", code: "ABORT_ERR" }, status: null, error: "interrupted", ms: this.elapsed() });
      if (this.controller && !this.controller.aborted) this.controller.abort(new Error("interrupted"));
    };
    if (signal.aborted) return onCut();
    this.release = onAbort(signal, onCut);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Settled before the connection was up: by the deadline or a cut.
    if (this.settled) controller.abort(new Error("deadline passed"));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx interim answers are not the response status.
    if (statusCode < 200) return;
    if (this.hop !== undefined && isRedirect(statusCode) && this.hops < this.maxRedirects) {
      const next = nextHop(this.hop, statusCode, headers["location"]);
      // Read to its end (so the connection is reused), then followed; an invalid Location is the answer.
      if (next !== undefined && !("invalid" in next)) {
        this.following = next;
        return;
      }
    }
    this.following = undefined;
    this.status = statusCode;
    this.headers = headers as Record<string, string | string[]>;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.following !== undefined) return;
    // After the deadline the capture is finished (its hash digested): later bytes are not the answer.
    if (!this.settled) this.capture?.push(chunk);
    if (this.keepResponse && this.keptBytes < KEPT_BODY_BYTES) {
      this.kept.push(chunk);
      this.keptBytes += chunk.length;
    }
    if (this.answerStartBytes <= EXCERPT_BYTES && wantsExcerpt(this.status)) {
      this.answerStart.push(chunk);
      this.answerStartBytes += chunk.length;
    }
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (this.following !== undefined) return this.follow(this.following);
    this.settle(this.statusReport());
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.settled) return;
    // A redirect's body cut short: its status and Location were in.
    if (this.following !== undefined) return this.follow(this.following);
    // A body cut short does not change the status already received.
    if (this.status !== 0) return this.settle(this.statusReport());
    if (errorCode(error) === "UND_ERR_CONNECT_TIMEOUT") return this.settle(this.timeoutReport());
    this.settle({ ...describeFailure(error, this.url), status: null, ms: this.elapsed() });
  }

  private onDeadline(): void {
    if (this.settled) return;
    // The head arrived in time: keep its status and stop reading a body that never ends.
    const report = this.status !== 0 ? this.statusReport() : this.timeoutReport();
    this.settle(report);
    if (this.controller && !this.controller.aborted) this.controller.abort(new Error("deadline passed"));
  }

  private settle(report: AttemptReport): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.release?.();
    this.resolve(report);
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.started);
  }

  private timeoutReport(): AttemptReport {
    return { outcome: { kind: "timeout" }, status: null, error: `timeout: no response within ${formatDuration(this.timeoutMs)}`, ms: this.elapsed() };
  }

  private statusReport(): AttemptReport {
    const status = this.status;
    const headers = this.headers ?? {};
    // Any answer's: whether it counts is the retry rules' to say (the planner's), not the transport's.
    const retryAfterMs = status >= 300 ? parseRetryAfter(headers["retry-after"], Date.now()) : undefined;
    const outcome: AttemptOutcome = retryAfterMs !== undefined ? { kind: "status", status, retryAfterMs } : { kind: "status", status };
    const error =
      status >= 200 && status < 300
        ? null
        : isRedirect(status) && this.hops >= this.maxRedirects && this.maxRedirects > 0
          ? `HTTP ${status}: more than ${this.maxRedirects} redirects`
          : statusError(status, Buffer.concat(this.answerStart));
    const captured = this.capture ? { captured: { contentType: contentTypeOf(headers), body: this.capture.finish() } } : {};
    if (!this.keepResponse) return { outcome, status, error, ms: this.elapsed(), ...captured };
    const body = (this.kept.length === 1 ? (this.kept[0] as Buffer) : Buffer.concat(this.kept)).subarray(0, KEPT_BODY_BYTES).toString("utf8");
    return { outcome, status, error, ms: this.elapsed(), response: { headers, body }, ...captured };
  }
}

/** A failure before any status: TLS (worded by us, naming --ca), an invalid request, or the network. */
export function describeFailure(error: unknown, url: string): { outcome: AttemptOutcome; error: string } {
  const code = errorCode(error);
  const host = new URL(url).host;
  const tls = tlsProblem(code);
  if (tls?.kind === "certificate") {
    const reason = `TLS: the certificate of ${host} is not trusted (${tls.problem}); nothing was sent. If it is signed by your own CA, pass it with --ca FILE`;
    return { outcome: { kind: "tls", code }, error: reason };
  }
  if (tls?.kind === "handshake") return { outcome: { kind: "tls", code }, error: `TLS: handshake with ${host} failed (${code}); nothing was sent` };
  const message = errorMessage(error);
  if (code === "UND_ERR_INVALID_ARG" || code === "ERR_INVALID_ARG_TYPE" || code === "ERR_INVALID_ARG_VALUE" || code === "ERR_INVALID_URL") {
    return { outcome: { kind: "invalid", reason: message }, error: `invalid request: ${message}` };
  }
  return { outcome: { kind: "network", code: code || "ERROR" }, error: `network: ${message}${code && !message.includes(code) ? ` (${code})` : ""}` };
}

// undici wraps socket errors; the useful code may sit on the cause.
function errorCode(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code !== "UND_ERR_SOCKET" && code !== "UND_ERR_CONNECT") return code;
    current = (current as { cause?: unknown }).cause;
  }
  const top = (error as { code?: unknown })?.code;
  return typeof top === "string" ? top : "";
}

function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return errorMessage(error.errors[0]);
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
