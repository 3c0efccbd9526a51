import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PortError } from "../errors.js";
import { errorBody, type Collector } from "./collector.js";
import { MAX_REQUEST_BYTES } from "../messages/limits.js";
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

// Past this much of an oversized body, stop draining it and drop the connection.
const DRAIN_LIMIT_BYTES = 8 * MAX_REQUEST_BYTES;

/** The node:http adapter of the collector: reads bodies (bounded), answers JSON, serves GET /health. */
export async function listenCollector(collector: Collector, options: { host: string; port: number } & ConnectionLimits): Promise<ServeServer> {
  const budget = new BodyBudget(DEFAULT_BODY_BUDGET_BYTES);
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
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > DRAIN_LIMIT_BYTES) {
    // Far too big to be worth reading: answer at once, read and discard (bounded) so the answer arrives, then close.
    lingeringClose(req, res);
    send(res, 400, errorBody(`request body is over the 500 KB limit (${MAX_REQUEST_BYTES} bytes)`, "request_too_large"));
    return;
  }
  readBody(req, res, budget, (body) => answerCall(collector, req, res, path, body));
}

function answerHealth(collector: Collector, req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, errorBody("use GET /health", "method_not_allowed"));
  send(res, 200, { status: "ok", ...collector.counts() });
}

/**
 * Reads a body within the shared budget and hands it on; a body the budget cannot hold is
 * answered 503 here. Bytes past the limit are dropped (parseJsonBody names the limit).
 */
function readBody(req: IncomingMessage, res: ServerResponse, budget: BodyBudget, onBody: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let held = 0;
  let refused = false;
  const release = (): void => {
    budget.give(held);
    held = 0;
    req.socket.off("close", release);
  };
  req.socket.once("close", release);
  req.on("data", (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    // Keep up to the first chunk past the limit: enough for parseJsonBody to see the size.
    if (size - chunk.length > MAX_REQUEST_BYTES) {
      if (size > DRAIN_LIMIT_BYTES) req.destroy();
      return;
    }
    if (!budget.take(chunk.length, size)) {
      // Too many bodies in memory at once (slow uploads): refuse this one, the client retries.
      refused = true;
      chunks.length = 0;
      release();
      lingeringClose(req, res);
      send(res, 503, { success: false, error: "too many request bodies in progress: retry later" });
      return;
    }
    held += chunk.length;
    chunks.push(chunk);
  });
  req.on("error", () => req.destroy());
  req.on("end", () => {
    if (refused) return;
    const body = Buffer.concat(chunks);
    release();
    onBody(body);
  });
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
