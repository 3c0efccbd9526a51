import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Clock, TimerHandle } from "../util/clock.js";
import { lingeringClose } from "../http/limits.js";
import type { ScriptedAnswer } from "./scripted-answers.js";
import type { OwnAnswer } from "./answer-decision.js";
import type { ForwardResult } from "./forward.js";
import type { RequestHeaders, RequestVerdict } from "./verdict.js";

const OK_BODY = '{"ok":true}';
// With a Content-Length (rather than chunked framing) node:http sends head and body in one write.
// The common answer's headers are made once, as a flat list: this runs for every request, and
// node:http reads a list without the own-property check it makes on each key of an object.
const OK_HEADERS = Object.entries(jsonHeaders(OK_BODY)).flat();

/** 1xx, 204 and 304 carry no body. */
function carriesBody(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}

/**
 * Sends the receiver's answers: the decided action (status, delay, hold,
 * drop) for complete requests, and the early answers (405, 413, 503) that go
 * out before a body is read, with a lingering close so they reach the sender.
 */
export class Responder {
  /** Connections held by a `timeout` fault, cut when the receiver closes. */
  private readonly held = new Set<Socket>();
  /** Answers waiting out --delay, sent at once when the receiver closes. */
  private readonly delayed = new Map<TimerHandle, () => void>();
  closing = false;
  /** Called when the last answer waiting out --delay has gone out. */
  onNoneDelayed: (() => void) | undefined;

  constructor(private readonly clock: Clock) {}

  /** Answers waiting out --delay. */
  get delayedCount(): number {
    return this.delayed.size;
  }

  answer(res: ServerResponse, status: number, body: string): void {
    if (!this.canAnswer(res)) return;
    if (!carriesBody(status)) res.writeHead(status).end();
    else res.writeHead(status, body === OK_BODY ? OK_HEADERS : jsonHeaders(body)).end(body);
  }

  /** listen --forward-to: the app's status, headers and body, as the app gave them. */
  relay(res: ServerResponse, result: ForwardResult): void {
    if (!this.canAnswer(res)) return;
    const withBody = carriesBody(result.status);
    res.writeHead(result.status, withBody ? { ...result.headers, "content-length": String(result.body.length) } : result.headers);
    res.end(withBody ? result.body : undefined);
  }

  /** False when the answer can no longer go out; while closing, each answer ends its connection, so server.close() completes once they are out. */
  canAnswer(res: ServerResponse): boolean {
    if (res.destroyed || res.headersSent) return false;
    if (this.closing) res.shouldKeepAlive = false;
    return true;
  }

  /** An answer before (or instead of) reading the body: the rest is read and thrown away, then the connection closes. */
  early(req: IncomingMessage, res: ServerResponse, status: number, body: string): void {
    lingeringClose(req, res);
    this.answer(res, status, body);
  }

  act(req: IncomingMessage, res: ServerResponse, action: OwnAnswer, request: { verdict: RequestVerdict; raw: Buffer; headers: RequestHeaders }): void {
    if (action.kind === "timeout") {
      this.hold(req.socket);
      return;
    }
    if (action.kind === "answer" && action.scripted) {
      const send = scriptedSender(res, action.status, action.scripted.answer, request);
      if (action.delayMs > 0 && !this.closing) this.delay(() => this.canAnswer(res) && send(), action.delayMs);
      else if (this.canAnswer(res)) send();
      return;
    }
    // The answer's text is made now: a delayed answer must not hold the verdict (and its parsed body) meanwhile.
    const body = action.kind === "answer" ? answerBody(action, request.verdict) : "";
    if (action.delayMs > 0 && !this.closing) this.delay(() => this.now(req, res, action, body), action.delayMs);
    else this.now(req, res, action, body);
  }

  /** The receiver is closing: cuts the held connections and sends the delayed answers now. */
  releaseHeld(): void {
    for (const socket of this.held) socket.destroy();
    for (const [handle, send] of this.delayed) {
      this.clock.clearTimeout(handle);
      send();
    }
    this.delayed.clear();
  }

  private delay(send: () => void, ms: number): void {
    const handle = this.clock.setTimeout(() => {
      this.delayed.delete(handle);
      send();
      if (this.delayed.size === 0) this.onNoneDelayed?.();
    }, ms);
    this.delayed.set(handle, send);
  }

  private hold(socket: Socket): void {
    // Held until the sender gives up (or we close).
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.held.add(socket);
    socket.once("close", () => this.held.delete(socket));
  }

  private now(req: IncomingMessage, res: ServerResponse, action: Exclude<OwnAnswer, { kind: "timeout" }>, body: string): void {
    if (action.kind === "drop") {
      req.socket.destroy();
      return;
    }
    this.answer(res, action.status, body);
  }
}

/** Sends a scripted answer (docs/receiver.md#scripted-answers): its headers, and its body, the request's (echo) or listen's own. */
function scriptedSender(res: ServerResponse, status: number, answer: ScriptedAnswer, request: { raw: Buffer; headers: RequestHeaders }): () => void {
  let body: Buffer | string = answer.body === null ? OK_BODY : answer.body === "echo" ? request.raw : answer.body;
  const headers: Record<string, string | readonly string[]> = { ...answer.headers };
  if (answer.body === null && headers["content-type"] === undefined) headers["content-type"] = "application/json";
  if (answer.body === "echo" && headers["content-type"] === undefined) headers["content-type"] = echoedType(request.headers["content-type"]);
  if (!carriesBody(status)) body = "";
  else headers["content-length"] = String(Buffer.byteLength(body));
  return () => res.writeHead(status, headers as Record<string, string | string[]>).end(body === "" ? undefined : body);
}

function echoedType(type: string | string[] | undefined): string {
  return typeof type === "string" && type !== "" ? type : "application/json";
}

function jsonHeaders(body: string): Record<string, string> {
  return { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
}

function answerBody(action: Extract<OwnAnswer, { kind: "answer" }>, verdict: RequestVerdict): string {
  if (action.injected) return `{"error":"injected failure (${action.status})"}`;
  if (verdict.signatureValid !== false) return OK_BODY;
  return JSON.stringify(verdict.diagnosis ? { error: verdict.signatureError, hint: verdict.diagnosis.message } : { error: verdict.signatureError });
}
