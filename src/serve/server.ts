import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PortError } from "../errors.js";
import { errorBody, type Collector } from "./collector.js";
import { TOO_LARGE_MESSAGE } from "./ingest.js";
import { MAX_REQUEST_BYTES } from "../messages/limits.js";
import { readBody } from "../util/body-reader.js";
import {
  BodyBudget,
  CONNECTIONS_CHECKING_INTERVAL_MS,
  DEFAULT_BODY_BUDGET_BYTES,
  lingeringClose,
  limitConnections,
  type ConnectionLimits,
} from "../util/http-limits.js";

export interface ServeServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The node:http adapter of the collector: reads bodies (bounded), answers JSON, serves GET /health. */
export async function listenCollector(
  collector: Collector,
  options: { host: string; port: number; /** Request bodies held in memory at once (default 32 MiB). */ bodyBudgetBytes?: number } & ConnectionLimits,
): Promise<ServeServer> {
  const budget = new BodyBudget(options.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES);
  const server = createServer({ connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS }, (req, res) => handle(collector, req, res, budget));
  limitConnections(server, options);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(new PortError(`cannot listen on ${options.host}:${options.port}: ${error.code ?? error.message}`, { cause: error }));
    };
    server.once("error", onError);
    server.listen(options.port, options.host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return { url: `http://${host}:${port}`, port, close: () => closeServer(server) };
}

function handle(collector: Collector, req: IncomingMessage, res: ServerResponse, budget: BodyBudget): void {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  if (path === "/health" || path === "/health/") return answerHealth(collector, req, res);
  // The answer goes out before the body has all arrived: a lingering close lets the client read it.
  const early = (status: number, body: Record<string, unknown>): void => {
    lingeringClose(req, res);
    send(res, status, body);
  };
  const body = readBody(req, MAX_REQUEST_BYTES, budget, {
    onBody: (raw) => {
      answerCall(collector, req, res, path, raw);
      body.release();
    },
    onTooLarge: () => early(400, errorBody(TOO_LARGE_MESSAGE, "request_too_large")),
    // Too many bodies in memory at once (slow uploads): refuse this one, the client retries.
    onOverBudget: () => early(503, errorBody("too many request bodies in progress: retry later", "unavailable")),
  });
}

function answerHealth(collector: Collector, req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, errorBody("use GET /health", "method_not_allowed"));
  send(res, 200, { status: "ok", ...collector.counts() });
}

function answerCall(collector: Collector, req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): void {
  let result;
  try {
    result = collector.handle({ method: req.method ?? "GET", path, authorization: req.headers.authorization, body, ip: clientIp(req) });
  } catch (error) {
    // The queue could not store the request (disk full, closed): the client must retry, so no 2xx.
    return send(res, 503, errorBody(`cannot store the request: ${(error as Error).message}`, "unavailable"));
  }
  send(res, result.status, result.body);
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function clientIp(req: IncomingMessage): string | undefined {
  const address = req.socket.remoteAddress;
  return address?.startsWith("::ffff:") ? address.slice(7) : address;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Connections still busy after a moment are cut: a stop must not hang on a slow client.
    setTimeout(() => server.closeAllConnections(), 1_000).unref();
  });
}
