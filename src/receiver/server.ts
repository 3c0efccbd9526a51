import type { IncomingMessage, ServerResponse } from "node:http";
import { sleep, systemClock, type Clock } from "../util/clock.js";
import { BodyBudget, DEFAULT_BODY_BUDGET_BYTES, type ConnectionLimits } from "../http/limits.js";
import { readBody } from "../http/body-reader.js";
import { AnswerPlan, type PlannedAnswer } from "./answer-plan.js";
import { startHttpServer } from "../http/server.js";
import { interruptedAnswer, recordedResponse, STOPPING_RETRY_AFTER_S, type ForwardRequest, type ForwardResult } from "./forward.js";
import { RecordBatcher, type RecordingSink } from "./record-batcher.js";
import { formatRequestLine, formatUnjudgedLine } from "./record.js";
import { Responder } from "./responder.js";
import { ALLOW_HEADER, isAcceptedMethod, isHealthCheck, methodNotAllowedVerdict, unreadVerdict } from "./methods.js";
import { isOriginForm, NOT_ORIGIN_FORM, notOriginFormVerdict } from "./request-target.js";
import type { ScriptedAnswers } from "./scripted-answers.js";
import { schemeNamed } from "../signing/schemes.js";
import { SignatureChecker } from "./signature-check.js";
import { judgeWith, withBody, withoutBody, type RequestHeaders, type RequestVerdict } from "./verdict.js";

/* What a receiver takes, what it tells of each request, and what it gives back; then the server. */

export interface ReceivedRequest {
  /** 1-based, in arrival order of complete requests. */
  index: number;
  receivedAt: Date;
  /** POST, PUT or PATCH; any other for a request refused with 405. */
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
  /** The index of the --responses rule that answered, or null. */
  rule: number | null;
}

export interface ReceiverOptions extends ConnectionLimits {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  /** The shared secret; `secrets` for several (key rotation). Without either, requests are accepted and marked unsigned. */
  secret?: string | undefined;
  secrets?: readonly string[] | undefined;
  /** The signature scheme required (docs/schemes.md); default: each recognised by its signature header. */
  scheme?: string | undefined;
  /** How far a timestamped scheme's timestamp may be from the clock, in seconds; default the scheme's own. */
  toleranceSeconds?: number | undefined;
  /** Twilio signs the URL: the URL the sender used up to the path, when a proxy or tunnel stands in front (default: this receiver's, by the Host header). */
  publicUrl?: string | undefined;
  strict?: boolean;
  answerPlan?: AnswerPlan;
  /**
   * Scripted answers (docs/receiver.md#scripted-answers): for a request the answer plan leaves to
   * the signature rule and whose signature did not fail, the first matching rule answers (even
   * when forwarding), else --respond with the plan's headers and body (not when forwarding).
   */
  scriptedAnswers?: ScriptedAnswers;
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Gets the lines of one or more requests (docs/recording.md#recording-line) in one call, before their answers are sent; a throw (disk full) answers 507. */
  recording?: RecordingSink;
  maxBodyBytes?: number;
  /** Bodies buffered at once across connections; past it, 503 (default 32 MiB). */
  bodyBudgetBytes?: number;
  clock?: Clock;
  /**
   * Called once per POST, PUT or PATCH, and per request refused unread (405 for another method but the health
   * check, 400 for a request-target that is not a path, 413), before its answer is sent; when
   * forwarding, once the app has answered.
   */
  onRequest?: (request: ReceivedRequest) => void;
  /**
   * Answers the requests the fault flags leave alone (not injected, held or
   * dropped) in place of --respond and the signature rule: listen --forward-to.
   * The request is recorded and reported with the result, then answered with it.
   */
  forward?: (request: ForwardRequest) => Promise<ForwardResult>;
  /**
   * Routing (listen --forward-to TYPE=URL): the relay for each request by its verdict, in place of
   * `forward`; undefined answers the request as without forwarding (docs/receiver.md#routing).
   */
  route?: (verdict: RequestVerdict) => ((request: ForwardRequest) => Promise<ForwardResult>) | undefined;
  /** A request could not be handled (answered 500) or recorded (answered 507). */
  onError?: (error: Error) => void;
  /** When given, `GET`/`HEAD /health` answers 200 with this JSON (the receiver's counts). */
  health?: () => Record<string, unknown>;
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

/** One complete request (POST, PUT or PATCH) and what was decided for it. */
interface Decided {
  req: IncomingMessage;
  res: ServerResponse;
  request: ReceivedRequest;
  action: PlannedAnswer;
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
    this.secrets = receiverSecrets(options);
    this.checker = signatureCheckerOf(options, this.secrets);
    this.responder.onNoneDelayed = () => this.settleIfIdle();
  }

  onHttpRequest(req: IncomingMessage, res: ServerResponse): void {
    if (this.responder.closing || this.finishing) return this.refuseWhileClosing(req, res);
    if (!isOriginForm(req.url ?? ""))
      return this.refuseUnread(req, res, req.method ?? "", notOriginFormVerdict(), 400, JSON.stringify({ error: NOT_ORIGIN_FORM }));
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
    this.refuseUnread(req, res, req.method ?? "", methodNotAllowedVerdict(req.method), 405, '{"error":"only POST, PUT and PATCH are accepted"}');
  }

  /** Judges, records and answers one complete request; returns the relay when the app is to answer it. */
  private handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> | undefined {
    if (this.responder.closing || this.finishing) return void this.refuseWhileClosing(req, res);
    const receivedAt = new Date(this.clock.now());
    let decided: Decided;
    let line: string | undefined;
    try {
      decided = this.decide(req, res, raw, receivedAt);
      const { action } = decided;
      const forward = action.kind === "answer" && !action.injected && !action.scripted ? this.forwardOf(decided.request.verdict) : undefined;
      if (forward && action.kind === "answer") {
        return this.relay({ ...decided, request: { ...decided.request, verdict: withoutBody(decided.request.verdict) } }, action.delayMs, forward);
      }
      if (this.batcher) line = this.recordLine(decided);
    } catch (error) {
      // No request may stop the receiver: this one gets a 500 and its bytes are still recorded.
      this.options.onError?.(error as Error);
      if (this.batcher)
        this.batcher.add(
          formatUnjudgedLine({ receivedAt, method: req.method ?? "POST", path: req.url ?? "/", headers: req.headers, raw, secret: this.secrets }),
          () => {},
        );
      return void this.responder.answer(res, 500, '{"error":"internal error handling the request"}');
    }
    if (this.batcher && line !== undefined) this.batcher.add(line, (failure) => this.afterRecording(decided, failure));
    else this.answer(decided);
    // An echo sends the request's bytes back: they stay in the budget until the answer is out.
    return decided.action.kind === "answer" && decided.action.scripted?.body === "echo" ? untilClosed(res) : undefined;
  }

  /** The relay for a request (routing picks it by type), or undefined when the receiver answers it. */
  private forwardOf(verdict: RequestVerdict): ReceiverOptions["forward"] {
    return this.options.route ? this.options.route(verdict) : this.options.forward;
  }

  /** Decides the answer to one complete request: the verdict, then the answer plan. */
  private decide(req: IncomingMessage, res: ServerResponse, raw: Buffer, receivedAt: Date): Decided {
    const method = req.method ?? "POST";
    const path = req.url ?? "/";
    const verdict = judgeWith(raw, req.headers, { checker: this.checker, strict: this.options.strict ?? false, path, now: receivedAt.getTime() });
    let action = this.plan.next(verdict.signatureValid !== false);
    // What the fault flags leave to the signature rule, a scripted answer may take (docs/receiver.md#scripted-answers).
    const picked =
      action.kind === "answer" && !action.injected && verdict.signatureValid !== false
        ? this.options.scriptedAnswers?.pick({ method, path, verdict }, action.status)
        : undefined;
    // A request --forward-to routes to an app is answered by a rule only; the app answers the rest.
    if (picked && action.kind === "answer" && (picked.rule !== null || !this.forwardOf(verdict)))
      action = { kind: "answer", status: picked.answer.status, injected: false, delayMs: picked.answer.delayMs ?? action.delayMs, scripted: picked.answer };
    const request: ReceivedRequest = {
      index: ++this.index,
      receivedAt,
      method,
      path,
      headers: req.headers,
      verdict,
      status: action.kind === "answer" ? action.status : null,
      fault: action.kind === "answer" ? null : action.kind,
      injected: action.kind === "answer" ? action.injected : true,
      raw,
      forwarded: null,
      rule: action.kind === "answer" && action.scripted ? (picked?.rule ?? null) : null,
    };
    return { req, res, request, action };
  }

  /**
   * listen --forward-to: held by --delay, then the app's answer is recorded, reported and relayed to
   * the sender. A stop cuts the delay or the relay short: the sender gets listen's 503 (interrupted).
   * `decided` comes without the parsed body (read again for the recording line): it may wait long.
   */
  private async relay(decided: Decided, delayMs: number, forward: NonNullable<ReceiverOptions["forward"]>): Promise<void> {
    const stop = new AbortController();
    this.relays.add(stop);
    try {
      if (delayMs > 0) await sleep(this.clock, delayMs, stop.signal).catch(() => {});
      const { req, res, request } = decided;
      const result = stop.signal.aborted
        ? interruptedAnswer(0)
        : await forward({ method: request.method, rawHeaders: req.rawHeaders, body: request.raw, signal: stop.signal, budget: this.budget });
      // The app's answer is in the budget until it has gone out (or the sender has gone).
      if (result.fromApp) this.budget.giveBackWhenAnswered(res, result.body.length);
      const relayed: Decided = { ...decided, request: { ...request, status: result.status, forwarded: result } };
      const send = (): void => {
        this.notify(relayed.request);
        this.responder.relay(relayed.res, result);
      };
      if (!this.batcher) return send();
      const recorded = { ...relayed, request: { ...relayed.request, verdict: withBody(request.verdict, request.raw) } };
      this.batcher.add(this.recordLine(recorded, recordedResponse(result)), (failure) => (failure === null ? send() : this.afterRecording(relayed, failure)));
    } catch (error) {
      this.options.onError?.(error as Error);
      this.responder.answer(decided.res, 500, '{"error":"internal error forwarding the request"}');
    } finally {
      this.relays.delete(stop);
      this.settleIfIdle();
    }
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

  private recordLine({ request }: Decided, response?: Record<string, unknown>): string {
    return formatRequestLine(request, this.secrets, response);
  }

  /** A request whose line could not be written (disk full) is answered 507, so the sender keeps it. */
  private afterRecording(decided: Decided, failure: Error | null): void {
    if (failure === null) return this.answer(decided);
    this.options.onError?.(failure);
    const status = (failure as NodeJS.ErrnoException).code === "ENOSPC" ? 507 : 503;
    this.notify({ ...decided.request, status, fault: null, injected: false });
    this.responder.answer(decided.res, status, `{"error":"cannot record the request (${(failure as NodeJS.ErrnoException).code ?? "write failed"})"}`);
  }

  private answer({ req, res, request, action }: Decided): void {
    this.notify(request);
    this.responder.act(req, res, action, request);
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
    this.refuseUnread(req, res, req.method ?? "POST", verdict, 413, `{"error":"body over ${this.maxBody} bytes"}`);
  }

  /** Refuses a request without reading its body (400, 405, 413) and tells the caller about it, as invalid. */
  private refuseUnread(req: IncomingMessage, res: ServerResponse, method: string, verdict: RequestVerdict, status: number, body: string): void {
    this.notify({
      index: ++this.index,
      receivedAt: new Date(this.clock.now()),
      method,
      path: req.url ?? "/",
      headers: req.headers,
      verdict,
      status,
      fault: null,
      injected: false,
      raw: EMPTY,
      forwarded: null,
      rule: null,
    });
    this.responder.early(req, res, status, body);
  }
}

/** `secret` then `secrets`: every secret a request may be signed with. */
export function receiverSecrets(options: Pick<ReceiverOptions, "secret" | "secrets">): string[] {
  return options.secret === undefined ? [...(options.secrets ?? [])] : [options.secret, ...(options.secrets ?? [])];
}

/** The receiver's signature check, built once (a scheme named with a secret its format refuses throws now); undefined without a secret. */
function signatureCheckerOf(options: ReceiverOptions, secrets: readonly string[]): SignatureChecker | undefined {
  // An unknown scheme is refused with or without a secret.
  if (options.scheme !== undefined) schemeNamed(options.scheme);
  if (secrets.length === 0) return undefined;
  const { scheme, toleranceSeconds, publicUrl } = options;
  return new SignatureChecker({ secrets, scheme, toleranceSeconds, publicUrl, secure: options.tls !== undefined });
}

/** Resolves once the answer has gone out or its connection closed. */
function untilClosed(res: ServerResponse): Promise<void> {
  if (res.destroyed || res.writableFinished) return Promise.resolve();
  return new Promise((resolve) => res.once("close", () => resolve()));
}
