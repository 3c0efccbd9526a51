import { rootCertificates } from "node:tls";
import { Agent, type Dispatcher } from "undici";
import { formatDuration } from "../util/duration.js";
import { honoursRetryAfter, parseRetryAfter } from "./policy.js";
import type { AttemptOutcome, PreparedRequest } from "./types.js";

/** What one POST produced: the outcome for the policy plus what --verbose shows. */
export interface AttemptReport {
  outcome: AttemptOutcome;
  status: number | null;
  error: string | null;
  ms: number;
  response?: { headers: Record<string, string | string[]>; body: string };
}

export interface TransportOptions {
  /** Extra trusted CA certificates (PEM), added to Node's default roots. */
  ca?: readonly string[];
  /** Keep-alive connections per origin. */
  connections?: number;
  /** The per-attempt deadline; undici's connect timeout is set to it so a stalled handshake is dropped too. */
  timeoutMs?: number;
}

// Enough of a response body for --verbose; the rest is read and dropped so the connection is reused.
const KEPT_BODY_BYTES = 16 * 1024;

// Node's verification failures: the certificate chain is not trusted or does not match the host.
const CERT_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_REJECTED",
  "INVALID_CA",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * The outgoing HTTP adapter: one undici Agent, which keeps one keep-alive pool
 * per origin, reused across messages and attempts.
 */
export class Transport {
  private readonly agent: Agent;
  private readonly locations = new Map<string, { origin: string; path: string } | { invalid: string }>();

  constructor(options: TransportOptions = {}) {
    const ca = options.ca && options.ca.length > 0 ? [...rootCertificates, ...options.ca] : undefined;
    this.agent = new Agent({
      connections: options.connections ?? 16,
      keepAliveTimeout: 10_000,
      // Our own deadline (in post) is the one reported; this one closes a stalled TCP/TLS connect.
      connectTimeout: options.timeoutMs ?? 10_000,
      headersTimeout: 0,
      bodyTimeout: 0,
      // Node's `ca` replaces the default store, so the roots are passed too. Verification stays on.
      connect: { rejectUnauthorized: true, ...(ca ? { ca } : {}) },
    });
  }

  /**
   * One POST with ONE deadline covering connect, TLS and the response head.
   * Never rejects: every failure is an outcome. Uses undici's dispatch
   * handler API directly: no response stream or promise per layer, which
   * matters when replay pushes thousands of messages a second.
   */
  post(request: PreparedRequest, timeoutMs: number, keepResponse = true): Promise<AttemptReport> {
    const where = this.locate(request.url);
    if ("invalid" in where) return Promise.resolve({ outcome: { kind: "invalid", reason: where.invalid }, status: null, error: where.invalid, ms: 0 });
    return new Promise((resolve) => {
      new Attempt(resolve, request.url, timeoutMs, keepResponse).start(this.agent, where.origin, where.path, request);
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

  async destroy(): Promise<void> {
    await this.agent.destroy();
  }
}

/**
 * One request's undici handler. Settles once: with the status when the response ends (its body
 * read so the connection is reused), with a timeout when the deadline passes before the head,
 * or with the failure. undici does not settle a request while its connect (TCP + TLS) is
 * pending, so the deadline resolves on its own; undici's connect timeout (set to the same
 * deadline) then drops the stalled socket.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private settled = false;
  private abortRequest: ((reason?: Error) => void) | undefined;
  private status = 0;
  private rawHeaders: Buffer[] | undefined;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;

  constructor(
    private readonly resolve: (report: AttemptReport) => void,
    private readonly url: string,
    private readonly timeoutMs: number,
    /** Keep headers and body for the report (--verbose); otherwise only what the policy needs. */
    private readonly keepResponse: boolean,
  ) {
    this.timer = setTimeout(() => this.onDeadline(), timeoutMs);
  }

  start(agent: Agent, origin: string, path: string, request: PreparedRequest): void {
    agent.dispatch({ origin, path, method: "POST", headers: request.headers, body: request.body }, this);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.abortRequest = abort;
    if (this.settled) abort(new Error("deadline passed"));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // 1xx interim answers are not the response status.
    if (statusCode < 200) return true;
    this.status = statusCode;
    this.rawHeaders = rawHeaders;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.keepResponse && this.keptBytes < KEPT_BODY_BYTES) {
      this.kept.push(chunk);
      this.keptBytes += chunk.length;
    }
    return true;
  }

  onComplete(): void {
    this.settle(this.statusReport());
  }

  onError(error: Error): void {
    if (this.settled) return;
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
    this.abortRequest?.(new Error("deadline passed"));
  }

  private settle(report: AttemptReport): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
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
    const retryAfter = honoursRetryAfter(status);
    const headers = this.keepResponse || retryAfter ? headerRecord(this.rawHeaders ?? []) : undefined;
    const retryAfterMs = retryAfter ? parseRetryAfter(headers?.["retry-after"], Date.now()) : undefined;
    const outcome: AttemptOutcome = retryAfterMs !== undefined ? { kind: "status", status, retryAfterMs } : { kind: "status", status };
    const error = status >= 200 && status < 300 ? null : `HTTP ${status}`;
    if (!this.keepResponse || !headers) return { outcome, status, error, ms: this.elapsed() };
    const body = (this.kept.length === 1 ? (this.kept[0] as Buffer) : Buffer.concat(this.kept)).subarray(0, KEPT_BODY_BYTES).toString("utf8");
    return { outcome, status, error, ms: this.elapsed(), response: { headers, body } };
  }
}

/** undici's raw [name, value, …] header list as lowercase names; repeated names become arrays. */
function headerRecord(raw: readonly Buffer[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as Buffer).toString("latin1").toLowerCase();
    const value = (raw[i + 1] as Buffer).toString("latin1");
    const previous = headers[name];
    headers[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return headers;
}

function describeFailure(error: unknown, url: string): { outcome: AttemptOutcome; error: string } {
  const code = errorCode(error);
  const message = errorMessage(error);
  if (CERT_CODES.has(code) || code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_")) {
    const reason = CERT_CODES.has(code)
      ? `TLS: the certificate of ${new URL(url).host} is not trusted (${message}); nothing was sent. If it is signed by your own CA, pass it with --ca FILE`
      : `TLS: handshake with ${new URL(url).host} failed (${message}); nothing was sent`;
    return { outcome: { kind: "tls", code }, error: reason };
  }
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
