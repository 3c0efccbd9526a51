import { EventEmitter } from "node:events";
import { rootCertificates } from "node:tls";
import { Agent } from "undici";
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
   * Never throws: every failure is an outcome.
   */
  async post(request: PreparedRequest, timeoutMs: number): Promise<AttemptReport> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const where = this.locate(request.url);
    if ("invalid" in where) return { outcome: { kind: "invalid", reason: where.invalid }, status: null, error: where.invalid, ms: 0 };

    // undici takes an EventEmitter as the signal: cheaper than an AbortController on this hot path.
    const abort = new AbortEmitter();
    let timedOut = false;
    let responseBody: { destroy(): unknown } | undefined;
    let timer: NodeJS.Timeout | undefined;
    // undici does not settle an aborted request while its connect (TCP + TLS) is pending, so the
    // deadline races the request instead of only aborting it.
    const deadline = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => {
        timedOut = true;
        abort.fire();
        responseBody?.destroy();
        resolve("timeout");
      }, timeoutMs);
    });
    const pending = this.agent.request({
      origin: where.origin,
      path: where.path,
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: abort,
    });
    try {
      const response = await Promise.race([pending, deadline]);
      if (response === "timeout") {
        // Whatever the abandoned request does later is of no interest; free its body if it comes.
        pending.then((late) => late.body.destroy(), () => undefined);
        return this.timeout(timeoutMs, elapsed());
      }
      responseBody = response.body;
      const status = response.statusCode;
      const headers = response.headers as Record<string, string | string[]>;
      // The head arrived in time; the body gets what is left of the deadline, then is cut off.
      const body = await readBody(response.body, () => timedOut);
      clearTimeout(timer);
      const retryAfterMs = honoursRetryAfter(status) ? parseRetryAfter(headers["retry-after"], Date.now()) : undefined;
      const outcome: AttemptOutcome = retryAfterMs !== undefined ? { kind: "status", status, retryAfterMs } : { kind: "status", status };
      const ok = status >= 200 && status < 300;
      return { outcome, status, error: ok ? null : `HTTP ${status}`, ms: elapsed(), response: { headers, body } };
    } catch (error) {
      clearTimeout(timer);
      if (timedOut || errorCode(error) === "UND_ERR_CONNECT_TIMEOUT") return this.timeout(timeoutMs, elapsed());
      return { ...describeFailure(error, request.url), status: null, ms: elapsed() };
    }
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

  private timeout(timeoutMs: number, ms: number): AttemptReport {
    return { outcome: { kind: "timeout" }, status: null, error: `timeout: no response within ${formatDuration(timeoutMs)}`, ms };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  async destroy(): Promise<void> {
    await this.agent.destroy();
  }
}

/** Reads the body (keeping the first KEPT_BODY_BYTES for --verbose) so the connection is reused. */
function readBody(body: NodeJS.ReadableStream & { destroy(): unknown }, expired: () => boolean): Promise<string> {
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let size = 0;
    const finish = (): void => {
      if (expired()) body.destroy();
      const all = kept.length === 1 ? (kept[0] as Buffer) : Buffer.concat(kept);
      resolve(all.subarray(0, KEPT_BODY_BYTES).toString("utf8"));
    };
    body.on("data", (chunk: Buffer) => {
      if (size < KEPT_BODY_BYTES) {
        kept.push(chunk);
        size += chunk.length;
      }
    });
    body.on("end", finish);
    // A body cut short (deadline, reset) does not change the status already received.
    body.on("error", finish);
    body.on("close", finish);
  });
}

/** The minimal abort signal undici accepts: an EventEmitter with `aborted`. */
class AbortEmitter extends EventEmitter {
  aborted = false;
  fire(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit("abort");
  }
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
