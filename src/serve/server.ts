import type { IncomingMessage, ServerResponse } from "node:http";
import { errorBody, type Collector, type IngestRoute } from "./collector.js";
import { Admission, DEFAULT_REQUESTS_AT_ONCE, MAX_WAIT_MS } from "./admission.js";
import { ANY_ORIGIN, corsFor, corsRequestOf, pageRefusedByFunction, preflight, type AllowedOrigins, type CorsHeaders } from "./cors.js";
import { TOO_LARGE_MESSAGE } from "./ingest.js";
import { routeRequest, type Route } from "./endpoints.js";
import { publicBaseUrl, settingsAnswer } from "./settings-answer.js";
import { MAX_REQUEST_BYTES } from "../messages/limits.js";
import { MAX_SOURCE_BODY_BYTES } from "../functions/request-file.js";
import { readBody } from "../http/body-reader.js";
import {
  BodyBudget,
  DEFAULT_BODY_BUDGET_BYTES,
  DEFAULT_SERVE_MAX_CONNECTIONS,
  lingeringClose,
  pastConnectionCap,
  type ConnectionLimits,
} from "../http/limits.js";
import { startHttpServer, type HttpServer } from "../http/server.js";
import { contentCodingOf, type ContentCoding } from "../http/inflate.js";
import { isLoopbackAddress, isLoopbackHost } from "../http/loopback.js";
import type { Clock } from "../util/clock.js";

export type ServeServer = HttpServer;

export interface ServeServerOptions extends ConnectionLimits {
  host: string;
  port: number;
  /** Serve HTTPS (clients that hard-code https://). */
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  /** Which page origins may call serve (default: any). */
  allowedOrigins?: AllowedOrigins;
  /** Request bodies held in memory at once (default 32 MiB), counted inflated. */
  bodyBudgetBytes?: number;
  /** Requests read and handled at once; more wait their turn (default 256). */
  requestsAtOnce?: number;
  /** The longest a request waits for its turn before a 503 with Retry-After (default 5 s). */
  maxWaitMs?: number;
  /** The clock of that wait (a VirtualClock in tests). */
  clock?: Clock | undefined;
}

/** Past this many connections a new one is closed on arrival (the soft cap's refusals cost a request each). */
const HARD_CONNECTIONS_MARGIN = 1_024;
/** What a client is told to wait before retrying a 503. */
const RETRY_AFTER_S = 2;

/**
 * The node:http(s) adapter of the collector (docs/serve-api.md): routes every
 * official client's paths, answers CORS and preflights, refuses foreign Host
 * names when bound to loopback, reads bodies (inflated, bounded), takes bursts
 * in turn, serves /health and the settings stand-in.
 */
export async function listenCollector(collector: Collector, options: ServeServerOptions): Promise<ServeServer> {
  const cap = options.maxConnections ?? DEFAULT_SERVE_MAX_CONNECTIONS;
  const context: Context = {
    collector,
    budget: new BodyBudget(options.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES),
    admission: new Admission(options.requestsAtOnce ?? DEFAULT_REQUESTS_AT_ONCE, options.maxWaitMs ?? MAX_WAIT_MS, undefined, options.clock),
    allowed: options.allowedOrigins ?? ANY_ORIGIN,
    loopbackOnly: isLoopbackAddress(options.host),
    tls: options.tls !== undefined,
    url: "",
  };
  const server = await startHttpServer(
    {
      host: options.host,
      port: options.port,
      tls: options.tls,
      limits: { ...options, maxConnections: cap, overCap: { hardMaxConnections: cap + HARD_CONNECTIONS_MARGIN } },
      // Connections still busy a moment after a stop are cut: a stop must not hang on a slow client.
      keepAliveTimeoutMs: 30_000,
      closeGraceMs: 1_000,
    },
    (req, res) => handle(context, req, res),
  );
  context.url = server.url;
  return server;
}

interface Context {
  collector: Collector;
  budget: BodyBudget;
  admission: Admission;
  allowed: AllowedOrigins;
  loopbackOnly: boolean;
  tls: boolean;
  /** serve's own URL, for the settings answer when Host says nothing usable. */
  url: string;
}

function handle(context: Context, req: IncomingMessage, res: ServerResponse): void {
  const answer = (status: number, body: Record<string, unknown>, headers: CorsHeaders = {}): void => {
    if (!req.complete) lingeringClose(req, res);
    send(res, status, body, headers);
  };
  // Bound to loopback, serve answers only loopback names: a page whose own name was rebound to 127.0.0.1 sends that name.
  const host = req.headers.host ?? "";
  if (context.loopbackOnly && !isLoopbackHost(host)) {
    return answer(403, errorBody(`serve answers only loopback names here (Host: ${host || "none"}); use http://127.0.0.1:PORT`, "forbidden"));
  }
  const routing = routeRequest(req.method ?? "GET", req.url ?? "/");
  const cors = corsRequestOf(req.headers);
  if (routing.kind === "preflight") {
    req.resume();
    const verdict = preflight(cors, context.allowed, routing.methods);
    if (verdict.status === 403) return answer(403, errorBody(verdict.message ?? "origin not allowed", "forbidden"), verdict.headers);
    res.writeHead(204, verdict.headers).end();
    return;
  }
  const verdict = corsFor(cors, context.allowed);
  // An origin not allowed is refused before anything is acted on: a text/plain POST needs no preflight.
  if (!verdict.allowed) return answer(403, errorBody(verdict.message, "forbidden"), verdict.headers);
  const headers = verdict.headers;
  if (routing.kind === "not_found") return answer(404, errorBody("no such endpoint", "not_found"), headers);
  const route = routing.route;
  if (routing.kind === "wrong_method") {
    const allow = [...routing.methods, "OPTIONS"].join(", ");
    return answer(405, errorBody(`${req.method} is not allowed here: use ${routing.methods.join(" or ")}`, "method_not_allowed"), { ...headers, Allow: allow });
  }
  if (route.kind !== "health") context.collector.traffic.route(route.label);
  if (pastConnectionCap(req.socket)) return unavailable(answer, headers, "too many connections at once: retry later");
  if (route.kind === "health") {
    req.resume();
    return send(res, 200, { status: "ok", ...context.collector.counts() }, headers);
  }
  if (route.kind === "settings") {
    req.resume();
    const body = settingsAnswer({ writeKey: route.writeKey, baseUrl: publicBaseUrl(req.headers.host, context.tls, context.url) });
    return send(res, 200, body as unknown as Record<string, unknown>, headers);
  }
  if (route.kind === "function") {
    const refused = pageRefusedByFunction(cors, context.allowed);
    if (refused !== undefined) return answer(403, errorBody(refused, "forbidden"), headers);
  }
  if (route.kind === "function" && context.collector.sourceFunctions?.has(route.name) !== true) {
    const names = context.collector.sourceFunctions?.names ?? [];
    const known = names.length > 0 ? `: serve runs ${names.map((name) => `/functions/${name}`).join(", ")}` : " (serve --source-function NAME=FILE runs one)";
    return answer(404, errorBody(`no source function named ${route.name}${known}`, "not_found"), headers);
  }
  takeInTurn(context, req, res, route, headers, answer);
}

type Answer = (status: number, body: Record<string, unknown>, headers?: CorsHeaders) => void;

function unavailable(answer: Answer, headers: CorsHeaders, message: string): void {
  answer(503, errorBody(message, "unavailable"), { ...headers, "Retry-After": String(RETRY_AFTER_S), Connection: "close" });
}

/** Waits for a turn (the body unread meanwhile), then reads the body and hands it to the collector. */
function takeInTurn(context: Context, req: IncomingMessage, res: ServerResponse, route: Route, headers: CorsHeaders, answer: Answer): void {
  const coding = contentCodingOf(req.headers["content-encoding"]);
  if (!coding.ok) return answer(415, errorBody(coding.message, "unsupported_encoding"), headers);
  req.pause();
  const withdraw = context.admission.enter(
    (ticket) => {
      res.once("close", () => ticket.leave());
      if (req.destroyed) return ticket.leave();
      readAndHandle(context, req, res, route, coding.coding, headers, answer);
      req.resume();
    },
    () => unavailable(answer, headers, `serve is busy: this request waited ${MAX_WAIT_MS / 1000} s for its turn; retry later`),
  );
  // res, not the socket: a keep-alive socket carries many requests, and a listener each would pile up.
  res.once("close", withdraw);
}

function readAndHandle(
  context: Context,
  req: IncomingMessage,
  res: ServerResponse,
  route: Route,
  coding: ContentCoding,
  headers: CorsHeaders,
  answer: Answer,
): void {
  const fn = route.kind === "function" ? route : undefined;
  const body = readBody(
    req,
    fn ? MAX_SOURCE_BODY_BYTES : MAX_REQUEST_BYTES,
    context.budget,
    {
      onBody: (raw) => {
        // A source function's body stays held while it runs (the budget counts it).
        if (fn) return void answerFunction(context.collector, req, res, fn, raw, headers).finally(() => body.release());
        if (route.kind === "metrics") send(res, 200, { success: true }, headers);
        else answerCall(context.collector, req, res, route as IngestRoute, raw, headers);
        body.release();
      },
      onTooLarge: () =>
        fn
          ? answer(413, errorBody(`the webhook body is over the ${MAX_SOURCE_BODY_BYTES / 1024} KiB a source function takes`, "request_too_large"), headers)
          : answer(400, errorBody(TOO_LARGE_MESSAGE, "request_too_large"), headers),
      onCorrupt: (message) => answer(400, errorBody(message, "invalid_request"), headers),
      // Too many bodies in memory at once (slow uploads): refuse this one, the client retries.
      onOverBudget: () => unavailable(answer, headers, "too many request bodies in progress: retry later"),
    },
    coding,
  );
}

function answerCall(collector: Collector, req: IncomingMessage, res: ServerResponse, route: IngestRoute, body: Buffer, headers: CorsHeaders): void {
  let result: ReturnType<Collector["handle"]>;
  try {
    result = collector.handle({
      route,
      path: route.label,
      authorization: req.headers.authorization,
      body,
      ip: clientIp(req),
      userAgent: req.headers["user-agent"],
    });
  } catch (error) {
    // The queue could not store the request (disk full, closed): the client must retry, so no 2xx.
    const message = `cannot store the request: ${(error as Error).message}`;
    return send(res, 503, errorBody(message, "unavailable"), { ...headers, "Retry-After": String(RETRY_AFTER_S) });
  }
  send(res, result.status, result.body, headers);
}

/** A source function's webhook (docs/serve-api.md#source-functions): the invocation, its calls stored, then the answer. */
async function answerFunction(
  collector: Collector,
  req: IncomingMessage,
  res: ServerResponse,
  route: Extract<Route, { kind: "function" }>,
  body: Buffer,
  headers: CorsHeaders,
): Promise<void> {
  const functions = collector.sourceFunctions as NonNullable<Collector["sourceFunctions"]>;
  const target = req.url ?? "";
  const query = target.indexOf("?");
  try {
    const answer = await functions.handle({
      name: route.name,
      body,
      rawHeaders: req.rawHeaders,
      search: query === -1 ? "" : target.slice(query),
      ip: clientIp(req),
    });
    send(res, answer.status, answer.body, headers);
  } catch (error) {
    // The queue could not store its calls: the sender must retry, so no 2xx.
    send(res, 503, errorBody(`cannot store the function's calls: ${(error as Error).message}`, "unavailable"), {
      ...headers,
      "Retry-After": String(RETRY_AFTER_S),
    });
  }
}

function send(res: ServerResponse, status: number, body: Record<string, unknown>, headers: CorsHeaders = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function clientIp(req: IncomingMessage): string | undefined {
  const address = req.socket.remoteAddress;
  return address?.startsWith("::ffff:") ? address.slice(7) : address;
}
