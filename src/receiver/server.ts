import type { IncomingMessage, ServerResponse } from "node:http";
import { sleep, systemClock, type Clock } from "../util/clock.js";
import { BodyBudget, DEFAULT_BODY_BUDGET_BYTES, type ConnectionLimits } from "../http/limits.js";
import { readBody } from "../http/body-reader.js";
import { AnswerPlan } from "./answer-plan.js";
import { decideAnswer, type AnswerDecision, type OwnAnswer } from "./answer-decision.js";
import { startHttpServer } from "../http/server.js";
import { interruptedAnswer, recordedResponse, STOPPING_RETRY_AFTER_S, type ForwardResult } from "./forward.js";
import { receivedRequest, type ReceivedRequest } from "./received-request.js";
import { RecordBatcher, type RecordingSink } from "./record-batcher.js";
import { formatRequestLine, formatUnjudgedLine } from "./record.js";
import { Responder } from "./responder.js";
import { ALLOW_HEADER, isAcceptedMethod, isHealthCheck } from "./methods.js";
import { isOriginForm, NOT_ORIGIN_FORM, notOriginFormVerdict } from "./request-target.js";
import type { ForwardFunction } from "./forward-routes.js";
import type { ScriptedAnswers } from "./scripted-answers.js";
import { schemeNamed } from "../signing/schemes.js";
import { receiverSecrets, SignatureChecker } from "./signature-check.js";
import { judgeWith, methodNotAllowedVerdict, unreadVerdict, withBody, withoutBody, type RequestVerdict } from "./verdict.js";

/* What a receiver takes and what it gives back; then the server. */

export interface ReceiverOptions extends ConnectionLimits {
  host?: string | undefined;
  /** 0 = any free port. */
  port?: number | undefined;
  /** The shared secret; `secrets` for several (key rotation). Without either, requests are accepted and marked unsigned. */
  secret?: string | undefined;
  secrets?: readonly string[] | undefined;
  /** The signature scheme required (docs/schemes.md); default: each recognised by its signature header. */
  scheme?: string | undefined;
  /** How far a timestamped scheme's timestamp may be from the clock, in seconds; default the scheme's own. */
  toleranceSeconds?: number | undefined;
  /** Twilio signs the URL: the URL the sender used up to the path, when a proxy or tunnel stands in front (default: this receiver's, by the Host header). */
  publicUrl?: string | undefined;
  /** The signature check built already (listen's, from its flags): in place of secret, secrets, scheme, toleranceSeconds and publicUrl. */
  checker?: SignatureChecker | undefined;
  strict?: boolean | undefined;
  answerPlan?: AnswerPlan | undefined;
  /**
   * Scripted answers (docs/receiver.md#scripted-answers): for a request the answer plan leaves to
   * the signature rule and whose signature did not fail, the first matching rule answers (even
   * when forwarding), else --respond with the plan's headers and body (not when forwarding).
   */
  scriptedAnswers?: ScriptedAnswers | undefined;
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  /** Gets the lines of one or more requests (docs/recording.md#recording-line) in one call, before their answers are sent; a throw (disk full) answers 507. */
  recording?: RecordingSink | undefined;
  maxBodyBytes?: number | undefined;
  /** Bodies buffered at once across connections; past it, 503 (default 32 MiB). */
  bodyBudgetBytes?: number | undefined;
  clock?: Clock | undefined;
  /**
   * Called once per POST, PUT or PATCH, and per request refused unread (405 for another method but the health
   * check, 400 for a request-target that is not a path, 413), before its answer is sent; when
   * forwarding, once the app has answered.
   */
  onRequest?: ((request: ReceivedRequest) => void) | undefined;
  /**
   * Answers the requests the fault flags leave alone (not injected, held or
   * dropped) in place of --respond and the signature rule: listen --forward-to.
   * The request is recorded and reported with the result, then answered with it.
   */
  forward?: ForwardFunction | undefined;
  /**
   * Routing (listen --forward-to TYPE=URL): the relay for each request by its verdict, in place of
   * `forward`; undefined answers the request as without forwarding (docs/receiver.md#routing).
   */
  route?: ((verdict: RequestVerdict) => ForwardFunction | undefined) | undefined;
  /** A request could not be handled (answered 500) or recorded (answered 507). */
  onError?: ((error: Error) => void) | undefined;
  /** When given, `GET`/`HEAD /health` answers 200 with this JSON (the receiver's counts). */
  health?: (() => Record<string, unknown>) | undefined;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  port: number;
  /**
   * Stops accepting and answers what is in flight at once: relays are interrupted (503), --delay
   * answers sent, `timeout` holds cut; then closes every connection.
   */
  close(): Promise<void>;
  /**
   * Refuses new requests (503) and resolves once the answers in flight have gone out on their own
   * time (held by --delay, waiting for the app); close() afterwards. listen's --count stops this way.
   */
  finish(): Promise<void>;
}

/** Bodies above this get 413 without being buffered (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** After a stop, how long connections still busy (an upload, a sender not reading its answer) are waited for. */
const CLOSE_GRACE_MS = 1_000;
const EMPTY = Buffer.alloc(0);

/** One request and its record. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  request: ReceivedRequest;
}

/** One complete request (POST, PUT or PATCH) that listen answers itself, and how. */
interface Decided extends Exchange {
  answer: OwnAnswer;
}

/** The node:http(s) adapter around the verifier: POST, PUT or PATCH on any path, verdict, record, answer. */
export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const receiver = new ReceiverCore(options);
  const { url, port, close } = await startHttpServer(
    {
      host: options.host ?? "127.0.0.1",
      port: options.port ?? 0,
      tls: options.tls,
      limits: options,
      answerBadRequests: true,
      closeGraceMs: CLOSE_GRACE_MS,
      // Answers in flight go out first: held and relayed ones at once.
      onClosing: () => receiver.stop(),
    },
    (req, res) => receiver.onHttpRequest(req, res),
  );
  return { url, port, close, finish: () => receiver.finish() };
}

/** What the receiver does with each request: read, decide, record, answer. */
class ReceiverCore {
  private readonly responder: Responder;
  private readonly plan: AnswerPlan;
  private readonly maxBody: number;
  private readonly budget: BodyBudget;
  private readonly clock: Clock;
  private readonly batcher: RecordBatcher | undefined;
  /** Built once: each scheme's keys made when the receiver starts, not per request. */
  private readonly checker: SignatureChecker | undefined;
  /** Every secret, masked in the recording. */
  private readonly secrets: readonly string[];
  /** Relays in flight (or held by --delay before it), interrupted by stop(). */
  private readonly relays = new Set<AbortController>();
  private index = 0;
  /** Set by finish(): new requests are refused while the answers in flight go out on their own time. */
  private finishing = false;
  private readonly settleWaiters = new Set<() => void>();

  constructor(private readonly options: ReceiverOptions) {
    this.clock = options.clock ?? systemClock;
    this.responder = new Responder(this.clock);
    this.plan = options.answerPlan ?? new AnswerPlan();
    this.maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
    this.budget = new BodyBudget(options.bodyBudgetBytes ?? DEFAULT_BODY_BUDGET_BYTES);
    this.batcher = options.recording ? new RecordBatcher(options.recording) : undefined;
    this.checker = signatureCheckerOf(options);
    this.secrets = this.checker?.settings.secrets ?? [];
    this.responder.onNoneDelayed = () => this.settleIfIdle();
  }

  onHttpRequest(req: IncomingMessage, res: ServerResponse): void {
    if (this.responder.closing || this.finishing) return this.refuseWhileClosing(req, res);
    if (!isOriginForm(req.url ?? "")) return this.refuseUnread(req, res, notOriginFormVerdict(), 400, JSON.stringify({ error: NOT_ORIGIN_FORM }));
    if (!isAcceptedMethod(req.method)) return this.otherMethod(req, res);
    const body = readBody(req, this.maxBody, this.budget, {
      onBody: (raw) => {
        const relaying = this.handle(req, res, raw);
        // A relayed body stays in the budget until the app has answered; any other is done with once judged.
        if (relaying) void relaying.finally(() => body.release());
        else body.release();
      },
      onTooLarge: (size) => this.tooLarge(req, res, size),
      // Named, with a Retry-After, as the relay's own refusal when an answer would pass the same budget.
      onOverBudget: () =>
        this.responder.early(
          req,
          res.setHeader("retry-after", "1"),
          503,
          JSON.stringify({ error: `too many request bodies in progress (listen's ${this.budget.describe()}): retry later` }),
        ),
    });
  }

  /** GET/HEAD /health answers readiness probes; any other method is shown and counted as invalid. */
  private otherMethod(req: IncomingMessage, res: ServerResponse): void {
    const { health } = this.options;
    if (health && isHealthCheck(req)) return this.responder.early(req, res, 200, JSON.stringify(health()));
    res.setHeader("allow", ALLOW_HEADER);
    this.refuseUnread(req, res, methodNotAllowedVerdict(req.method), 405, '{"error":"only POST, PUT and PATCH are accepted"}');
  }

  /** Judges, records and answers one complete request; returns the relay when the app is to answer it. */
  private handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> | undefined {
    if (this.responder.closing || this.finishing) return void this.refuseWhileClosing(req, res);
    const receivedAt = new Date(this.clock.now());
    let decided: Decided;
    let line: string | undefined;
    try {
      const path = req.url ?? "/";
      const verdict = judgeWith(raw, req.headers, { checker: this.checker, strict: this.options.strict ?? false, path, now: receivedAt.getTime() });
      const decision = this.decide(req, verdict);
      const request = receivedRequest(req, raw, verdict, { index: ++this.index, receivedAt, decision });
      // The relay may wait long: it holds the raw bytes, not the parsed body (read again for the recording line).
      if (decision.kind === "relay") return this.relay({ req, res, request: { ...request, verdict: withoutBody(verdict) } }, decision.delayMs, decision.relay);
      decided = { req, res, request, answer: decision };
      if (this.batcher) line = formatRequestLine(request, this.secrets);
    } catch (error) {
      return void this.failedToHandle(req, res, raw, receivedAt, error as Error);
    }
    if (this.batcher && line !== undefined)
      this.batcher.add(line, (failure) => (failure === null ? this.answer(decided) : this.recordingFailed(decided, failure)));
    else this.answer(decided);
    // An echo sends the request's bytes back: they stay in the budget until the answer is out.
    return decided.answer.kind === "answer" && decided.answer.scripted?.answer.body === "echo" ? untilClosed(res) : undefined;
  }

  /** How a judged request is answered: the answer plan, then a scripted answer or the app (answer-decision.ts). */
  private decide(req: IncomingMessage, verdict: RequestVerdict): AnswerDecision<ForwardFunction> {
    const signatureOk = verdict.signatureValid !== false;
    const answers = this.options.scriptedAnswers;
    const pick = answers && ((status: number) => answers.pick({ method: req.method ?? "POST", path: req.url ?? "/", verdict }, status));
    return decideAnswer(this.plan.next(signatureOk), { signatureOk, pick, relay: this.forwardOf(verdict) });
  }

  /** No request may stop the receiver: one that could not be handled gets a 500, and its bytes are still recorded. */
  private failedToHandle(req: IncomingMessage, res: ServerResponse, raw: Buffer, receivedAt: Date, error: Error): void {
    this.options.onError?.(error);
    if (this.batcher) {
      const unjudged = { receivedAt, method: req.method ?? "POST", path: req.url ?? "/", headers: req.headers, raw, secret: this.secrets };
      this.batcher.add(formatUnjudgedLine(unjudged), () => {});
    }
    this.responder.answer(res, 500, '{"error":"internal error handling the request"}');
  }

  /** The relay for a request (routing picks it by type), or undefined when the receiver answers it. */
  private forwardOf(verdict: RequestVerdict): ForwardFunction | undefined {
    return this.options.route ? this.options.route(verdict) : this.options.forward;
  }

  /**
   * listen --forward-to: held by --delay, then the app's answer is recorded, reported and relayed to
   * the sender. A stop cuts the delay or the relay short: the sender gets listen's 503 (interrupted).
   */
  private async relay(exchange: Exchange, delayMs: number, forward: ForwardFunction): Promise<void> {
    const stop = new AbortController();
    this.relays.add(stop);
    try {
      if (delayMs > 0) await sleep(this.clock, delayMs, stop.signal).catch(() => {});
      const { req, res, request } = exchange;
      const result = stop.signal.aborted
        ? interruptedAnswer(0)
        : await forward({ method: request.method, rawHeaders: req.rawHeaders, body: request.raw, signal: stop.signal, budget: this.budget });
      // The app's answer is in the budget until it has gone out (or the sender has gone).
      if (result.fromApp) this.budget.giveBackWhenAnswered(res, result.body.length);
      this.relayed({ ...exchange, request: { ...request, status: result.status, forwarded: result } }, result);
    } catch (error) {
      this.options.onError?.(error as Error);
      this.responder.answer(exchange.res, 500, '{"error":"internal error forwarding the request"}');
    } finally {
      this.relays.delete(stop);
      this.settleIfIdle();
    }
  }

  /** The app's answer: recorded (with the body parsed again for the line), reported, then sent. */
  private relayed(exchange: Exchange, result: ForwardResult): void {
    const send = (): void => {
      this.notify(exchange.request);
      this.responder.relay(exchange.res, result);
    };
    if (!this.batcher) return send();
    const { request } = exchange;
    const line = formatRequestLine({ ...request, verdict: withBody(request.verdict, request.raw) }, this.secrets, recordedResponse(result));
    this.batcher.add(line, (failure) => (failure === null ? send() : this.recordingFailed(exchange, failure)));
  }

  /** A request that arrives (or completes) while the receiver closes: 503, to be retried once listen is back. */
  private refuseWhileClosing(req: IncomingMessage, res: ServerResponse): void {
    res.setHeader("retry-after", String(STOPPING_RETRY_AFTER_S));
    this.responder.early(req, res, 503, '{"error":"shutting down"}');
  }

  /**
   * Refuses new requests (503), then resolves once no answer is in flight: none held by --delay,
   * none waiting for the app (a `timeout` hold is not waited for: close() cuts it). Checked after
   * the current task, so the answer being decided as this is called counts.
   */
  finish(): Promise<void> {
    this.finishing = true;
    return new Promise((resolve) => {
      this.settleWaiters.add(resolve);
      setImmediate(() => this.settleIfIdle());
    });
  }

  private settleIfIdle(): void {
    if (!this.finishing || this.relays.size > 0 || this.responder.delayedCount > 0) return;
    for (const settle of this.settleWaiters) settle();
    this.settleWaiters.clear();
  }

  /** The receiver is closing: new requests get 503, relays and held answers are released now. */
  stop(): void {
    this.responder.closing = true;
    for (const relay of this.relays) relay.abort();
    this.responder.releaseHeld();
  }

  /** A request whose line could not be written (disk full) is answered 507, so the sender keeps it. */
  private recordingFailed({ res, request }: Exchange, failure: Error): void {
    this.options.onError?.(failure);
    const status = (failure as NodeJS.ErrnoException).code === "ENOSPC" ? 507 : 503;
    this.notify({ ...request, status, fault: null, injected: false });
    this.responder.answer(res, status, `{"error":"cannot record the request (${(failure as NodeJS.ErrnoException).code ?? "write failed"})"}`);
  }

  private answer({ req, res, request, answer }: Decided): void {
    this.notify(request);
    this.responder.act(req, res, answer, request);
  }

  /** Tells the caller about a request; a throwing callback is reported, never the receiver's end. */
  private notify(request: ReceivedRequest): void {
    try {
      this.options.onRequest?.(request);
    } catch (error) {
      this.options.onError?.(error as Error);
    }
  }

  private tooLarge(req: IncomingMessage, res: ServerResponse, size: number | null): void {
    const verdict = unreadVerdict(size ?? this.maxBody + 1, "(body)", `the body is over ${this.maxBody} bytes${size !== null ? ` (${size})` : ""}`);
    this.refuseUnread(req, res, verdict, 413, `{"error":"body over ${this.maxBody} bytes"}`);
  }

  /** Refuses a request without reading its body (400, 405, 413) and tells the caller about it, as invalid. */
  private refuseUnread(req: IncomingMessage, res: ServerResponse, verdict: RequestVerdict, status: number, body: string): void {
    const decision: OwnAnswer = { kind: "answer", status, injected: false, delayMs: 0 };
    this.notify(receivedRequest(req, EMPTY, verdict, { index: ++this.index, receivedAt: new Date(this.clock.now()), decision }));
    this.responder.early(req, res, status, body);
  }
}

/** Resolves once the answer has gone out or its connection closed. */
function untilClosed(res: ServerResponse): Promise<void> {
  if (res.destroyed || res.writableFinished) return Promise.resolve();
  return new Promise((resolve) => res.once("close", () => resolve()));
}

/** The receiver's signature check, built once (a scheme named with a secret its format refuses throws now); undefined without a secret. */
function signatureCheckerOf(options: ReceiverOptions): SignatureChecker | undefined {
  if (options.checker !== undefined) return options.checker.settings.secrets.length > 0 ? options.checker : undefined;
  // An unknown scheme is refused with or without a secret.
  if (options.scheme !== undefined) schemeNamed(options.scheme);
  const secrets = receiverSecrets(options);
  if (secrets.length === 0) return undefined;
  const { scheme, toleranceSeconds, publicUrl } = options;
  return new SignatureChecker({ secrets, scheme, toleranceSeconds, publicUrl, secure: options.tls !== undefined });
}
