import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { PortError, UsageError, type ErrorSource } from "../errors.js";
import { CONNECTIONS_CHECKING_INTERVAL_MS, limitConnections, type ConnectionLimits } from "./limits.js";

/*
 * The one way listen's receiver, serve and the inspector start and stop their
 * node:http(s) server: made (with TLS when asked), listening with one wording
 * of each port problem, and closed with a grace for the answers in flight.
 */

export interface HttpServerOptions {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Serve HTTPS with this certificate and key. */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  /** A cap on open connections and timeouts for slow requests (checked every 2 s); Node's defaults without. */
  limits?: ConnectionLimits;
  /** How long an idle keep-alive connection stays open (Node's default: 5 s). */
  keepAliveTimeoutMs?: number;
  /**
   * Answer a request Node cannot parse (400, or 408 past the request timeout) and close once that
   * answer is written; without it Node's own handler answers (431 for oversized headers).
   */
  answerBadRequests?: boolean;
  /** Where the port came from, named in a PortError (the inspector's `uiPort`: the CLI shows --ui-port). */
  portSource?: ErrorSource;
  /**
   * On close, how long connections still busy (an upload, a sender not reading its answer) are
   * waited for before they are cut; 0 cuts them at once.
   */
  closeGraceMs: number;
  /** Called on close once no new connection is accepted: release what holds answers back. */
  onClosing?: () => void;
}

export interface HttpServer {
  /** `http://127.0.0.1:PORT` (`https:` with TLS; an IPv6 host in brackets), no trailing slash. */
  url: string;
  port: number;
  /** Stops accepting, then closes every connection within the grace; the same promise on every call. */
  close(): Promise<void>;
}

/** Creates the server and listens; a port that cannot be used is a PortError, a bad certificate a UsageError. */
export async function startHttpServer(options: HttpServerOptions, onRequest: (req: IncomingMessage, res: ServerResponse) => void): Promise<HttpServer> {
  const server = createServerFor(options, onRequest);
  if (options.limits) limitConnections(server, options.limits);
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  if (options.answerBadRequests) answerBadRequests(server);
  const port = await listen(server, options.host, options.port, options.portSource);
  let closed: Promise<void> | undefined;
  return {
    url: `${options.tls ? "https" : "http"}://${formatHost(options.host)}:${port}`,
    port,
    close() {
      closed ??= closeServer(server, options.closeGraceMs, options.onClosing);
      return closed;
    },
  };
}

function createServerFor(options: HttpServerOptions, onRequest: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const serverOptions = options.limits ? { connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS } : {};
  if (!options.tls) return createHttpServer(serverOptions, onRequest);
  let server: Server;
  try {
    server = createHttpsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, onRequest);
  } catch (error) {
    throw new UsageError(`cannot use the certificate and key: ${(error as Error).message}`, { field: "tlsCert" });
  }
  // A failed TLS handshake must not take the server down.
  server.on("tlsClientError", () => {});
  return server;
}

/** A bad request line or header gets its answer, then the connection is closed. */
function answerBadRequests(server: Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "408 Request Timeout" : "400 Bad Request";
    // Closed once written, even if the client keeps its side open (sockets here allow half-open).
    socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`, () => socket.destroy());
  });
}

function listen(server: Server, host: string, port: number, source: ErrorSource | undefined): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(new PortError(`cannot listen on ${formatHost(host)}:${port}: ${portProblem(error)}`, { cause: error, ...(source ? { source } : {}) }));
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function formatHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

function portProblem(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "EADDRINUSE":
      return "the port is already in use (EADDRINUSE)";
    case "EACCES":
      return "permission denied (EACCES): ports below 1024 need privileges";
    case "EADDRNOTAVAIL":
      return "the address is not available on this machine (EADDRNOTAVAIL)";
    case "ENOTFOUND":
      return "the host name does not resolve (ENOTFOUND)";
    default:
      return error.message;
  }
}

function closeServer(server: Server, graceMs: number, onClosing: (() => void) | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    let cap: NodeJS.Timeout | undefined;
    server.close(() => {
      clearTimeout(cap);
      resolve();
    });
    server.closeIdleConnections();
    onClosing?.();
    if (graceMs <= 0) return server.closeAllConnections();
    // Answers in flight go out first, but a stop never waits for long.
    cap = setTimeout(() => server.closeAllConnections(), graceMs);
    cap.unref();
  });
}
