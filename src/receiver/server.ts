import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import { PortError, UsageError } from "../errors.js";
import { systemClock, type Clock } from "../util/clock.js";
import { FaultPlan, type FaultAction } from "./faults.js";
import { recordedResponse, type ForwardRequest, type ForwardResult } from "./forward.js";
import { formatRecordLine } from "./record.js";
import { judgeRequest, type RequestHeaders, type RequestVerdict } from "./verdict.js";

/** Bodies above this get 413 without being buffered (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface ReceivedRequest {
  /** 1-based, in arrival order of complete requests. */
  index: number;
  receivedAt: Date;
  method: string;
  path: string;
  headers: RequestHeaders;
  verdict: RequestVerdict;
  /** The status answered (or about to be), or null for `timeout` and `drop`. */
  status: number | null;
  /** An injected hold or dropped connection. */
  fault: "timeout" | "drop" | null;
  /** The status came from a fault flag rather than the signature rule. */
  injected: boolean;
  /** The exact body bytes received (empty for a 413). */
  raw: Buffer;
  /** With `forward`: the app's answer (or the 502/504 given for it); otherwise null. */
  forwarded: ForwardResult | null;
}

export interface ReceiverOptions {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  secret?: string | undefined;
  strict?: boolean;
  faults?: FaultPlan;
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Gets one line per POST (CONTRACT.md 4), before the answer is sent. */
  recording?: { append(line: string): void };
  maxBodyBytes?: number;
  clock?: Clock;
  /** Called once per POST, before its answer is sent (when forwarding, once the app has answered). */
  onRequest?: (request: ReceivedRequest) => void;
  /**
   * Answers the requests the fault flags leave alone (not injected, held or
   * dropped) in place of --respond and the signature rule: listen --forward-to.
   * The request is recorded and reported with the result, then answered with it.
   */
  forward?: (request: ForwardRequest) => Promise<ForwardResult>;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  port: number;
  /** Stops accepting, lets answers in flight finish (held ones are cut), then closes every connection. */
  close(): Promise<void>;
}

const CLOSE_GRACE_MS = 10_000;
const JSON_HEADERS = { "content-type": "application/json" };
const OK_BODY = '{"ok":true}';
const EMPTY = Buffer.alloc(0);

/** The node:http(s) adapter around the verifier: POST on any path, verdict, record, answer. */
export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const host = options.host ?? "127.0.0.1";
  const secret = options.secret;
  const strict = options.strict ?? false;
  const faults = options.faults ?? new FaultPlan();
  const recording = options.recording;
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const clock = options.clock ?? systemClock;
  const onRequest = options.onRequest;
  const forward = options.forward;
  const held = new Set<Socket>();
  let closing = false;
  let index = 0;

  const answer = (res: ServerResponse, status: number, body: string): void => {
    if (res.destroyed) return;
    // While closing, each answer ends its connection, so server.close() completes once they are out.
    if (closing) res.shouldKeepAlive = false;
    // 1xx, 204 and 304 carry no body.
    if (status < 200 || status === 204 || status === 304) res.writeHead(status).end();
    else res.writeHead(status, JSON_HEADERS).end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer): void => {
    if (closing) {
      refuse(req, res);
      return;
    }
    const receivedAt = new Date(clock.now());
    const verdict = judgeRequest(raw, req.headers, { secret, strict });
    const action = faults.next(verdict.signatureValid !== false);
    const path = req.url ?? "/";
    if (forward && action.kind === "answer" && !action.injected) {
      void relay(req, res, { index: ++index, receivedAt, path, raw, verdict }, action.delayMs, forward);
      return;
    }
    const status = action.kind === "answer" ? action.status : null;
    onRequest?.({
      index: ++index,
      receivedAt,
      method: "POST",
      path,
      headers: req.headers,
      verdict,
      status,
      fault: action.kind === "answer" ? null : action.kind,
      injected: action.kind === "answer" ? action.injected : true,
      raw,
      forwarded: null,
    });

    if (recording) {
      const line = formatRecordLine({
        receivedAt,
        method: "POST",
        path,
        headers: req.headers,
        signatureValid: verdict.signatureValid,
        raw,
        text: verdict.text,
        body: verdict.body,
        secret,
      });
      // Requests completed in the same event-loop turn share one write, which precedes all their answers.
      batchLines += line;
      batchAnswers.push({ req, res, action, verdict });
      if (batchAnswers.length === 1) setImmediate(flushBatch);
    } else respond(req, res, action, verdict);
  };

  /** Held by --delay, then the app's answer is recorded, reported and relayed to the sender. */
  const relay = async (
    req: IncomingMessage,
    res: ServerResponse,
    arrival: { index: number; receivedAt: Date; path: string; raw: Buffer; verdict: RequestVerdict },
    delayMs: number,
    forwardTo: NonNullable<ReceiverOptions["forward"]>,
  ): Promise<void> => {
    if (delayMs > 0) await new Promise<void>((done) => clock.setTimeout(done, delayMs));
    const result = await forwardTo({ method: "POST", rawHeaders: req.rawHeaders, body: arrival.raw });
    const { index: number, receivedAt, path, raw, verdict } = arrival;
    onRequest?.({ index: number, receivedAt, method: "POST", path, headers: req.headers, verdict, status: result.status, fault: null, injected: false, raw, forwarded: result });
    const { signatureValid, text, body } = verdict;
    recording?.append(
      formatRecordLine({ receivedAt, method: "POST", path, headers: req.headers, signatureValid, raw, text, body, secret, response: recordedResponse(result) }),
    );
    if (res.destroyed) return;
    if (closing) res.shouldKeepAlive = false;
    const bodyless = result.status < 200 || result.status === 204 || result.status === 304;
    res.writeHead(result.status, { ...result.headers, ...(bodyless ? {} : { "content-length": String(result.body.length) }) });
    res.end(bodyless ? undefined : result.body);
  };

  let batchLines = "";
  let batchAnswers: { req: IncomingMessage; res: ServerResponse; action: FaultAction; verdict: RequestVerdict }[] = [];
  const flushBatch = (): void => {
    const answers = batchAnswers;
    const lines = batchLines;
    batchAnswers = [];
    batchLines = "";
    recording?.append(lines);
    for (const { req, res, action, verdict } of answers) respond(req, res, action, verdict);
  };

  const respond = (req: IncomingMessage, res: ServerResponse, action: FaultAction, verdict: RequestVerdict): void => {
    if (action.kind === "timeout") {
      // Held until the sender gives up (or we close).
      if (closing) {
        req.socket.destroy();
        return;
      }
      held.add(req.socket);
      req.socket.once("close", () => held.delete(req.socket));
      return;
    }
    if (action.delayMs > 0) clock.setTimeout(() => act(req, res, action, verdict), action.delayMs);
    else act(req, res, action, verdict);
  };

  const act = (req: IncomingMessage, res: ServerResponse, action: Exclude<FaultAction, { kind: "timeout" }>, verdict: RequestVerdict): void => {
    if (action.kind === "drop") {
      req.socket.destroy();
      return;
    }
    let body = OK_BODY;
    if (action.injected) body = `{"error":"injected failure (${action.status})"}`;
    else if (verdict.signatureValid === false) {
      body = JSON.stringify(verdict.diagnosis ? { error: verdict.signatureError, hint: verdict.diagnosis.message } : { error: verdict.signatureError });
    }
    answer(res, action.status, body);
  };

  const refuse = (req: IncomingMessage, res: ServerResponse): void => {
    res.shouldKeepAlive = false;
    answer(res, 503, '{"error":"shutting down"}');
    req.resume();
  };

  const tooLarge = (req: IncomingMessage, res: ServerResponse, size: number | null): void => {
    const verdict: RequestVerdict = {
      size: size ?? maxBody + 1,
      signatureValid: null,
      signatureError: null,
      diagnosis: null,
      text: null,
      body: undefined,
      type: undefined,
      userId: undefined,
      name: undefined,
      shapeErrors: [{ key: "(body)", message: `the body is over ${maxBody} bytes${size !== null ? ` (${size})` : ""}` }],
      shapeWarnings: [],
      valid: false,
    };
    const path = req.url ?? "/";
    onRequest?.({ index: ++index, receivedAt: new Date(clock.now()), method: "POST", path, headers: req.headers, verdict, status: 413, fault: null, injected: false, raw: EMPTY, forwarded: null });
    res.shouldKeepAlive = false;
    res.writeHead(413, { ...JSON_HEADERS, connection: "close" }).end(`{"error":"body over ${maxBody} bytes"}`);
    // Read and discard the rest (never buffered) so the sender sees the 413, within reason.
    let discarded = 0;
    req.on("data", (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > 16 * maxBody) req.socket.destroy();
    });
    req.resume();
  };

  const onHttpRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (closing) {
      refuse(req, res);
      return;
    }
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      answer(res, 405, '{"error":"only POST is accepted"}');
      req.resume();
      return;
    }
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > maxBody) {
      tooLarge(req, res, Number(declared));
      return;
    }
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > maxBody) {
        over = true;
        first = undefined;
        chunks = undefined;
        tooLarge(req, res, null);
        return;
      }
      if (first === undefined) first = chunk;
      else (chunks ??= [first]).push(chunk);
    });
    req.on("end", () => {
      if (over) return;
      handle(req, res, chunks ? Buffer.concat(chunks, size) : (first ?? Buffer.alloc(0)));
    });
    // An aborted request is not a request: nothing to judge or answer.
    req.on("error", ignore);
  };

  let server: Server;
  if (options.tls) {
    try {
      server = createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, onHttpRequest);
    } catch (error) {
      throw new UsageError(`cannot use the certificate and key: ${(error as Error).message}`, { field: "tlsCert" });
    }
  } else {
    server = createHttpServer(onHttpRequest);
  }
  // A bad request line or TLS handshake must not take the receiver down.
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  server.on("tlsClientError", () => {});

  const port = await new Promise<number>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(new PortError(`cannot listen on ${formatHost(host)}:${options.port ?? 0}: ${portProblem(error)}`, { cause: error }));
    };
    server.once("error", onError);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });

  let closed: Promise<void> | undefined;
  return {
    url: `${options.tls ? "https" : "http"}://${formatHost(host)}:${port}`,
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        // Answers in flight (a --delay included) go out first, but never wait forever.
        const cap = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(cap);
          resolve();
        });
        server.closeIdleConnections();
        for (const socket of held) socket.destroy();
      });
      return closed;
    },
  };
}

function ignore(): void {}

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
