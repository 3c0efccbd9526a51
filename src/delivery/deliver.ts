import type { Destination, Target } from "../config/destination.js";
import { InputError } from "../errors.js";
import type { SchemeName } from "../signing/schemes.js";
import { onAbort } from "../util/abort-listeners.js";
import { sleep, systemClock, type Clock, type Random } from "../util/clock.js";
import { holdProcess } from "../util/hold-process.js";
import { recordedRequest, singleRequest, type RequestContent } from "./actions-request.js";
import { classifyOutcome, deliveredRound, planNextRound, type NextRound } from "./policy.js";
import { RequestSigner, type MessageIdentity, type Signature } from "./request-signer.js";
import { RETRY_RULES, type RetryRules } from "./retry-rules.js";
import type { AttemptReport, DeliveryTransport, SendOptions } from "./transport.js";
import { deliverFunctionBatch, type BatchEngine } from "./function-batch.js";
import { DEFAULT_RETRY_WINDOW_MS, type AttemptOutcome, type DeliverCall, type DeliveryResult, type PreparedRequest, type UrlResult } from "./types.js";
import { emitAttempts, finish, refusedResult, resultOf, UrlState } from "./url-state.js";

/** How the engine delivers: its deadline, retry window, clock, randomness and network. */
export interface DeliveryOptions {
  /** Deadline per attempt for the response status, connect and TLS included. Default: the destination's (5 s; Webhooks (Actions) 10 s). */
  timeoutMs?: number | undefined;
  /** No attempt starts later than this after the first one. Default 4 h. */
  retryWindowMs?: number | undefined;
  clock?: Clock | undefined;
  random?: Random | undefined;
  /** The network: the undici adapter in production, a fake in unit tests. The engine closes it. */
  transport: DeliveryTransport;
  /**
   * `standard`: Standard Webhooks' retry schedule (docs/schemes.md#retries) instead of the
   * destination's; its attempt deadline and window are then the defaults.
   */
  retryRules?: "destination" | "standard" | undefined;
  /** Random bytes for new message ids (tests pass fixed ones). Default node:crypto's. */
  randomBytes?: (size: number) => Uint8Array;
}

export interface EngineSettings {
  targets: Target[];
  /** The secret; `secrets` for several (key rotation: list-carrying schemes sign with each, the others with the first). */
  secret: string | undefined;
  secrets?: readonly string[] | undefined;
  /** The signature scheme (docs/schemes.md), unless a target names its own; default `default` (X-Signature). */
  scheme?: SchemeName | undefined;
  userAgent: string;
  /** Which destination's rules (docs/actions.md): `classic` (the default) or Webhooks (Actions). */
  destination?: Destination;
}

/**
 * THE delivery engine (docs/delivery.md#the-forwarded-request, docs/delivery.md#retry-schedule,
 * docs/actions.md): signs the exact bytes, sends them to the targets through its transport,
 * retries the retryable ones on the policy's schedule, and reports; delivery failures are
 * results, never rejections. Classic: every target at once, any-of, retried together. Webhooks
 * (Actions): each target is its own subscription, with its own request and its own retries.
 */
export class DeliveryEngine {
  readonly destination: Destination;
  private readonly settings: EngineSettings;
  private readonly rules: RetryRules;
  private readonly timeoutMs: number;
  private readonly retryWindowMs: number;
  private readonly clock: Clock;
  private readonly random: Random;
  private readonly transport: DeliveryTransport;
  // Keys made once: converting the text per message costs more than the hash.
  private readonly signer: RequestSigner;
  private readonly scheme: SchemeName;
  /** The attempt options of a call that asks for nothing more than the deadline (the usual one): made once. */
  private readonly plainSend: SendOptions;

  constructor(settings: EngineSettings, options: DeliveryOptions) {
    this.destination = settings.destination ?? "classic";
    this.settings = { targets: [...settings.targets], secret: settings.secret, userAgent: settings.userAgent, destination: this.destination };
    this.scheme = settings.scheme ?? "default";
    const secrets = settings.secrets ?? (settings.secret === undefined ? [] : [settings.secret]);
    // Destination functions read events, not signatures: their targets sign nothing (stateFor).
    const signed = settings.targets.filter((target) => target.function === undefined).map((target) => target.scheme ?? this.scheme);
    this.signer = new RequestSigner(secrets, settings.targets.length === 0 ? [this.scheme] : signed, options.randomBytes);
    const standard = options.retryRules === "standard";
    this.rules = standard ? RETRY_RULES.standard : RETRY_RULES[this.destination];
    this.timeoutMs = options.timeoutMs ?? this.rules.timeoutMs;
    this.retryWindowMs = options.retryWindowMs ?? (standard ? RETRY_RULES.standard.limit.windowMs : DEFAULT_RETRY_WINDOW_MS);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.transport = options.transport;
    this.plainSend = Object.freeze({ timeoutMs: this.timeoutMs });
  }

  /**
   * The exact request a message becomes for `target` (docs/delivery.md#the-forwarded-request,
   * docs/actions.md#the-request); --dry-run prints it. An event Webhooks (Actions) refuses (its
   * `data` is not an object) is an InputError saying why.
   */
  prepare(body: string | Uint8Array, target: Target, call: Pick<DeliverCall, "recorded" | "canonical" | "identity"> = {}): PreparedRequest {
    const content = this.contentFor(toBuffer(body), target, call);
    if ("refused" in content) throw new InputError(content.refused);
    return this.prepareContent(target, content, call.identity);
  }

  /** The exact request for a content already built (a Webhooks (Actions) batch), signed with the clock now. */
  prepareContent(target: Target, content: RequestContent, identity: DeliverCall["identity"] = {}): PreparedRequest {
    return this.stateFor(target, content, identity, undefined).request;
  }

  /**
   * Delivers one message to every target; resolves with the result (never rejects for delivery failures).
   * Classic returns run's promise itself, not an async wrapper around it: one promise and one
   * resumption fewer per message (serve and replay deliver thousands a second).
   */
  deliver(body: string | Uint8Array, call: DeliverCall = {}): Promise<DeliveryResult> {
    if (this.destination !== "classic") return this.deliverEach(body, call);
    try {
      const bytes = toBuffer(body);
      const content = this.contentFor(bytes, undefined, call) as RequestContent;
      // Same message, bytes and secret for every target: one id and one signature per scheme (a scheme that signs the URL, per target).
      const targets = call.targets ?? this.settings.targets;
      const signed: SignedMessage | undefined = targets.length > 1 ? new Map() : undefined;
      const states = targets.map((target) => this.stateFor(target, content, call.identity ?? NO_IDENTITY, signed));
      return this.run(states, call);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Webhooks (Actions): each target maps the message by its own mapping and retries on its own. */
  private async deliverEach(body: string | Uint8Array, call: DeliverCall): Promise<DeliveryResult> {
    const bytes = toBuffer(body);
    const targets = call.targets ?? this.settings.targets;
    const results: (UrlResult | UrlState)[] = targets.map((target) => {
      const content = this.contentFor(bytes, target, call);
      return "refused" in content ? refusedResult(target, content.refused) : this.stateFor(target, content, call.identity ?? NO_IDENTITY, undefined);
    });
    const states = results.filter((entry): entry is UrlState => entry instanceof UrlState);
    const outcomes = await Promise.all(states.map((state) => this.run([state], call)));
    const urls = results.map((entry) => (entry instanceof UrlState ? entry.result() : entry));
    return {
      delivered: urls.length > 0 && urls.length === states.length && outcomes.every((o) => o.delivered),
      rounds: Math.max(0, ...outcomes.map((o) => o.rounds)),
      interrupted: outcomes.some((o) => o.interrupted),
      urls,
    };
  }

  /**
   * Webhooks (Actions): one request (an event's, or a batch's) to one target, retried whole on
   * the `actions` row. The dispatcher sends each target's batches this way.
   */
  async deliverContent(target: Target, content: RequestContent, call: DeliverCall = {}): Promise<DeliveryResult> {
    const state = this.stateFor(target, content, call.identity ?? NO_IDENTITY, undefined);
    return await this.run([state], call);
  }

  /**
   * A destination function's batch (docs/functions.md#batches): the events go in one request (their
   * JSON array, for `onBatch`), each gets its own outcome from the transport, and only the events
   * to be retried go again, together, on the destination's schedule. One result per event, in order
   * (function-batch.ts).
   * @internal the command line's (the dispatcher sends a function's batches so).
   */
  async deliverBatch(target: Target, bodies: readonly (string | Uint8Array)[], call: DeliverCall = {}): Promise<DeliveryResult[]> {
    return await deliverFunctionBatch(this.batchEngine(), target, bodies.map(toBuffer), call);
  }

  /** Closes the transport (keep-alive connections); waits for requests in flight. */
  async close(): Promise<void> {
    await this.transport.close();
  }

  /** What a message becomes for a target: classic sends its bytes; Webhooks (Actions) maps it (no target: classic). */
  private contentFor(bytes: Buffer, target: Target | undefined, call: Pick<DeliverCall, "recorded" | "canonical">): RequestContent | { refused: string } {
    if (call.recorded) return recordedRequest(call.recorded.method, bytes, call.recorded.rule);
    if (this.destination === "classic" || target === undefined) return { method: "POST", body: bytes, signed: bytes };
    return singleRequest(target, { body: bytes, canonical: call.canonical });
  }

  /**
   * One URL's attempts at one request, signed by its target's scheme with the clock now. A scheme
   * that signs a timestamp is signed again before each retry under the same id
   * (docs/schemes.md#timestamps); `signed` gives the targets of one scheme the message's one id and signature.
   */
  private stateFor(target: Target, content: RequestContent, identity: MessageIdentity, signed: SignedMessage | undefined): UrlState {
    // A destination function reads events, not signatures.
    if (target.function !== undefined) return new UrlState(target, this.prepareRequest(target, content, undefined));
    const scheme = target.scheme ?? this.scheme;
    const first = signed?.get(scheme);
    // One id per message, whatever the number of its targets: a receiver de-duplicates on it.
    const id = first?.id ?? this.signer.idFor(scheme, identity);
    const signature =
      first !== undefined && !RequestSigner.signsUrl(scheme)
        ? first.signature
        : this.signer.sign(scheme, content, target.url, id, identity.event, this.clock.now());
    if (first === undefined) signed?.set(scheme, { id, signature });
    const request = this.prepareRequest(target, content, signature);
    if (!RequestSigner.renewsPerAttempt(scheme) || signature === undefined) return new UrlState(target, request);
    const renew = (now: number): PreparedRequest =>
      this.prepareRequest(target, content, this.signer.sign(scheme, content, target.url, id, identity.event, now));
    return new UrlState(target, request, renew);
  }

  /** Rounds until delivered, given up, or stopped: every pending URL at once; any-of when there are several (classic). The result names `states`' URLs. */
  private async run(states: readonly UrlState[], call: DeliverCall): Promise<DeliveryResult> {
    if (states.length === 0) return resultOf(states, false, 0, false);
    if (call.signal?.aborted) return resultOf(states, false, 0, true);
    const firstAttemptAt = call.firstAttemptAt ?? this.clock.now();
    const send = this.sendOptionsOf(call);
    let pending: readonly UrlState[] = states;
    for (let round = 1; ; round++) {
      let reports: AttemptReport[] | undefined;
      // A timestamped scheme's retry carries a fresh timestamp (and the same id).
      if (round > 1) for (const state of pending) state.renewAt(this.clock.now());
      if (send.signal) reports = await this.attemptAllUnlessCut(pending, send, send.signal);
      else if (pending.length === 1) {
        // One URL (the usual case): its attempt awaited here, not through attemptAll's own promise.
        const only = pending[0] as UrlState;
        const report = await this.transport.send(only.request, send);
        only.record(report);
        reports = [report];
      } else reports = await this.attemptAll(pending, send);
      // Cut short by the stop: nothing is known of this round, so the message is neither delivered nor failed.
      if (reports === undefined) return resultOf(states, false, round, true);
      // A 2xx decides the round: no clock reading nor outcome list for the usual delivery.
      const plan =
        deliveredRound(reports) ??
        this.planAfter(
          round,
          reports.map((r) => r.outcome),
          firstAttemptAt,
        );
      // Delivered (the usual case) needs no list of the URLs to retry.
      const retryable =
        plan.retry || plan.reason === "window"
          ? pending.filter((_, i) => classifyOutcome((reports[i] as AttemptReport).outcome, this.rules) === "retry")
          : NONE;
      const stopping = plan.retry && call.signal?.aborted === true;
      if (call.onAttempt) emitAttempts(call.onAttempt, pending, reports, plan.retry && !stopping ? plan.waitMs : undefined, retryable);

      if (!plan.retry) return resultOf(states, finish(plan, retryable), round, false);
      if (stopping || !(await this.wait(plan.waitMs, call.signal))) return resultOf(states, false, round, true);
      pending = retryable;
    }
  }

  /** The round after `round`, given its outcomes: the retry rules' wait, or why it ends. */
  private planAfter(round: number, outcomes: readonly AttemptOutcome[], firstAttemptAt: number): NextRound {
    return planNextRound({ round, outcomes, now: this.clock.now(), firstAttemptAt, windowMs: this.retryWindowMs, random: this.random, rules: this.rules });
  }

  /** What a function's batch takes of this engine (function-batch.ts). */
  private batchEngine(): BatchEngine {
    return {
      rules: this.rules,
      clock: this.clock,
      prepareContent: (target, content) => this.prepareContent(target, content),
      sendOptionsOf: (call) => this.sendOptionsOf(call),
      send: (request, options) => this.transport.send(request, options),
      planAfter: (round, outcomes, firstAttemptAt) => this.planAfter(round, outcomes, firstAttemptAt),
      wait: (ms, signal) => this.wait(ms, signal),
    };
  }

  /** How each attempt of `call` is made: the deadline; the answers kept or captured; the signal that cuts it (`cutAttempts`). */
  private sendOptionsOf(call: DeliverCall): SendOptions {
    const signal = call.cutAttempts === true ? call.signal : undefined;
    if (call.keepResponse !== true && call.captureResponse !== true && signal === undefined) return this.plainSend;
    return { timeoutMs: this.timeoutMs, keepResponse: call.keepResponse === true, captureResponse: call.captureResponse === true, signal };
  }

  /** One round of several URLs: every pending URL at once, each report recorded on its URL. */
  private async attemptAll(pending: readonly UrlState[], send: SendOptions): Promise<AttemptReport[]> {
    const reports = await Promise.all(pending.map((state) => this.transport.send(state.request, send)));
    for (const [i, state] of pending.entries()) state.record(reports[i] as AttemptReport);
    return reports;
  }

  /**
   * attemptAll, cut short when `cut` aborts: the attempts in flight are aborted, and the round
   * yields nothing (undefined) unless every answer was in first.
   */
  private async attemptAllUnlessCut(pending: readonly UrlState[], send: SendOptions, cut: AbortSignal): Promise<AttemptReport[] | undefined> {
    if (cut.aborted) return undefined;
    const sent = Promise.all(pending.map((state) => this.transport.send(state.request, send)));
    let stopListening = (): void => {};
    const stopped = new Promise<undefined>((resolve) => {
      stopListening = onAbort(cut, () => resolve(undefined));
    });
    const reports = await Promise.race([sent, stopped]);
    stopListening();
    // An answer that came in as the stop did may be the transport's report of the cut itself.
    if (reports === undefined || cut.aborted) return undefined;
    for (const [i, state] of pending.entries()) state.record(reports[i] as AttemptReport);
    return reports;
  }

  /** Waits before the next round; false when the signal stopped the wait. */
  private async wait(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
    // The clock's timers are unref'd; a caller awaiting this delivery must not see its process exit mid-wait.
    const release = holdProcess();
    try {
      await sleep(this.clock, ms, signal);
      return true;
    } catch {
      return false;
    } finally {
      release();
    }
  }

  private prepareRequest(target: Target, content: RequestContent, signature: Signature | undefined): PreparedRequest {
    const headers: Record<string, string> = { "User-Agent": this.settings.userAgent };
    // Webhooks (Actions) sends no Content-Type with no body (docs/actions.md#the-request).
    if (content.body !== undefined) headers["Content-Type"] = "application/json";
    if (signature !== undefined) for (const [name, value] of signature.headers) headers[name] = value;
    for (const [name, value] of Object.entries(target.headers)) {
      // A static User-Agent replaces ours rather than sending two.
      if (name.toLowerCase() === "user-agent") delete headers["User-Agent"];
      headers[name] = value;
    }
    const request: PreparedRequest = { url: signature?.url ?? target.url, method: content.method, headers, body: content.body ?? EMPTY };
    if (this.rules.followsRedirects) request.followRedirects = this.rules.maxRedirects;
    return request;
  }
}

const EMPTY = Buffer.alloc(0);

/** What the targets of one message share, by scheme: its id and, unless the scheme signs the URL, its signature. */
type SignedMessage = Map<SchemeName, { id: string; signature: Signature | undefined }>;

const NONE: readonly UrlState[] = [];
const NO_IDENTITY: MessageIdentity = {};

function toBuffer(body: string | Uint8Array): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}
