import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Limits every receiver (listen, serve) puts on its connections. */
export interface ConnectionLimits {
  /** Open connections at once; more are closed on arrival (default 256). */
  maxConnections?: number | undefined;
  /** Time to receive the request headers (default 15 s). */
  headersTimeoutMs?: number | undefined;
  /** Time to receive the whole request, body included (default 30 s). */
  requestTimeoutMs?: number | undefined;
  /**
   * With this, `maxConnections` is a soft cap: a connection past it is still
   * taken, and its request answered with this status line and headers (a 503
   * with Retry-After, which clients retry) and closed, rather than reset;
   * only connections past `hardMaxConnections` are closed on arrival.
   */
  overCap?: { hardMaxConnections: number };
}

/** Connections taken past a soft cap (see `overCap`): their requests are answered with a refusal. */
const PAST_CAP = new WeakSet<object>();

/** Whether this request's connection came past the soft cap. */
export function pastConnectionCap(socket: Socket): boolean {
  return PAST_CAP.has(socket);
}

export const DEFAULT_MAX_CONNECTIONS = 256;
/** serve's: an analytics-node flush of 20,000 calls opens about 1,300 connections at once, and they wait their turn. */
export const DEFAULT_SERVE_MAX_CONNECTIONS = 2_048;
const HEADERS_TIMEOUT_MS = 15_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** Applies the limits; node:http checks the timeouts every `connectionsCheckingInterval` (set at creation). */
export function limitConnections(server: Server, limits: ConnectionLimits = {}): void {
  const cap = limits.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  server.maxConnections = limits.overCap ? Math.max(cap, limits.overCap.hardMaxConnections) : cap;
  if (limits.overCap) markConnectionsPastCap(server, cap);
  server.headersTimeout = limits.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  server.requestTimeout = limits.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
}

function markConnectionsPastCap(server: Server, cap: number): void {
  let open = 0;
  // Under TLS the request's socket is the TLS socket, which `secureConnection` gives.
  const event = "setSecureContext" in server ? "secureConnection" : "connection";
  server.on(event, (socket: Socket) => {
    open += 1;
    if (open > cap) PAST_CAP.add(socket);
    socket.once("close", () => {
      open -= 1;
    });
  });
}

/** How often node:http looks for connections past their timeouts (its default is 30 s). */
export const CONNECTIONS_CHECKING_INTERVAL_MS = 2_000;

/** What a lingering close reads and throws away, and for how long, before giving up on the sender. */
const LINGER_MAX_BYTES = 16 * 1024 * 1024;
const LINGER_MAX_MS = 5_000;

/**
 * Ends a connection whose answer went out before its body arrived (413, 401,
 * 503, an injected fault) so that the answer reaches the sender: a socket
 * closed while data is still arriving sends a reset, which can discard the
 * answer at the sender. So keep reading and discarding, bounded in time and
 * bytes, and close when the body ends or a bound is reached.
 */
export function lingeringClose(req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false;
  if (req.complete) return;
  const socket = req.socket as Socket & { destroySoon?: () => void };
  // node:http destroys the socket as soon as a closing answer is written; half-close instead (FIN after the
  // answer) and keep reading, so the sender gets the answer rather than a reset.
  socket.destroySoon = () => socket.end();
  let discarded = 0;
  const cut = (): void => {
    socket.destroy();
  };
  const timer = setTimeout(cut, LINGER_MAX_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  req.removeAllListeners("data");
  req.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  req.on("error", () => {});
  req.resume();
}

/**
 * One budget for the request bodies buffered at once, across connections, so
 * many slow uploads cannot take all the memory. A request that would go past
 * it is refused (503) rather than buffered.
 */
export class BodyBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Takes `bytes` for a body of `total` bytes so far; false (nothing taken) when that would exceed the budget. */
  take(bytes: number, total: number): boolean {
    const limit = total <= SMALL_BODY_BYTES ? this.limitBytes + SMALL_BODY_RESERVE_BYTES : this.limitBytes;
    if (this.used + bytes > limit) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  /** `32 MiB budget for bodies in memory`: how a refusal names it. */
  describe(): string {
    const mib = this.limitBytes / (1024 * 1024);
    return `${Number.isInteger(mib) ? `${mib} MiB` : `${this.limitBytes} bytes`} budget for bodies in memory`;
  }

  /** Gives `bytes` back once the response has gone out or its connection closed (at once if it already has). */
  giveBackWhenAnswered(res: ServerResponse, bytes: number): void {
    if (res.destroyed || res.writableFinished) this.give(bytes);
    else res.once("close", () => this.give(bytes));
  }
}

/** Bodies up to this size may use a reserve past the limit, so ordinary requests still pass while large uploads fill the rest. */
const SMALL_BODY_BYTES = 64 * 1024;
const SMALL_BODY_RESERVE_BYTES = 8 * 1024 * 1024;

/** The default budget: 32 MiB of bodies in memory at once per receiver. */
export const DEFAULT_BODY_BUDGET_BYTES = 32 * 1024 * 1024;
