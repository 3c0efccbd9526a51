import type { IncomingMessage, ServerResponse } from "node:http";
import { errorBody, type Collector, type IngestResponse } from "./collector.js";
import { TOO_LARGE_MESSAGE } from "./ingest.js";
import { MAX_REQUEST_BYTES } from "../messages/limits.js";
import { readBody } from "../util/body-reader.js";
import { BodyBudget, DEFAULT_BODY_BUDGET_BYTES, lingeringClose, type ConnectionLimits } from "../util/http-limits.js";
import { startHttpServer, type HttpServer } from "../util/http-server.js";

export type ServeServer = HttpServer;

/** The node:http adapter of the collector: reads bodies (bounded), answers JSON, serves GET /health. */
export async function listenCollector(
  collector: Collector,
  options: { host: string; port: number /** Request bodies held in memory at once (default 32 MiB). */; bodyBudgetBytes?: number } & ConnectionLimits,
): Promise<ServeServer> {
  const budget = new BodyBudget(options.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES);
  const { url, port, close } = await startHttpServer(
    // Connections still busy a moment after a stop are cut: a stop must not hang on a slow client.
    { host: options.host, port: options.port, limits: options, keepAliveTimeoutMs: 30_000, closeGraceMs: 1_000 },
    (req, res) => handle(collector, req, res, budget),
  );
  return { url, port, close };
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
  let result: IngestResponse;
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
