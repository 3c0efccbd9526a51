import type { Message, MessageType } from "../messages/schemas.js";
import type { RequestMatch } from "../receiver/match.js";
import type { ResponseRule } from "../receiver/rules-file.js";
import type { RequestHeaders, RequestVerdict } from "../receiver/verdict.js";
import type { Clock } from "../util/clock.js";

/* The types of `startReceiver` (docs/library.md#a-receiver-in-your-tests): what it takes and gives. */

export type { BodyKind, RequestMatch, VerdictFilter } from "../receiver/match.js";
export type { ResponseRule } from "../receiver/rules-file.js";

export interface StartReceiverOptions {
  /** The shared secret signatures are checked with; without one (nor `secrets`) every request is accepted and marked unsigned. */
  secret?: string;
  /** Several secrets (key rotation): a signature made with any of them verifies, and the verdict's `signatureSecret` says which (from 1). */
  secrets?: readonly string[];
  /**
   * The signature scheme required (docs/schemes.md): `default` (X-Signature), `standard`, `svix`,
   * `github`, `stripe`, `shopify`, `slack` or `twilio`. Default: each request's scheme is
   * recognised by its signature header. An unknown name, or a secret the scheme cannot take, rejects.
   */
  scheme?: string;
  /** How far a timestamped scheme's timestamp may be from the clock, in seconds (default the scheme's: 300). */
  toleranceSeconds?: number;
  /** Twilio signs the URL: the URL senders use up to the path, when a proxy or tunnel stands in front (default the receiver's own). */
  publicUrl?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** listen --strict: every body must be a message, unknown keys are errors. */
  strict?: boolean;
  /** The answer when nothing else decides (listen --respond, --respond-header, --respond-body): a status, or a status with headers and a body. Default 200 `{"ok":true}`. */
  respond?: number | { status?: number; headers?: Record<string, string>; body?: unknown };
  /** Rules, first match wins (listen --responses); `respondWith` replaces them per test. */
  responses?: readonly ResponseRule[];
  /** Failures on purpose (listen's fault flags); `reset()` starts them over. */
  faults?: ReceiverFaults;
  /** listen --forward-to: relay what no fault or rule answers to your app, and answer with its response. */
  forwardTo?: string;
  /** Serve HTTPS with this certificate and key (PEM). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** What `requests` keeps (default the last 1,000 within 64 MB); waitFor sees every arrival whatever they keep. */
  history?: { keep?: number; maxBytes?: number };
  /** The clock of delays and waitFor's timeouts (default: the system's). */
  clock?: Clock;
}

/** listen's fault flags, as options. */
export interface ReceiverFaults {
  /** Request by request, then the last repeats: statuses, `timeout` (hold until the sender gives up), `drop`. E.g. `[503, 503, "timeout", 200]` or `"503,503,timeout,200"`. */
  script?: string | readonly (number | "timeout" | "drop")[];
  /** The first N requests get `failStatus`. */
  failFirst?: number;
  /** Each request gets `failStatus` with this probability (0–1); `seed` makes it repeatable. */
  failRate?: number;
  /** Default 503. */
  failStatus?: number;
  /** Hold every answer: milliseconds or a duration such as `250ms`. */
  delay?: number | string;
  seed?: number;
}

/** A request's verdict as the receiver keeps it: without the body (`body` and `text` are on the request). */
export type ReceivedVerdict = Omit<RequestVerdict, "text" | "body">;

/** One request the receiver got, as a test asserts on it; `M`: what its `message` is known to be (see MatchedMessage). */
export interface ReceivedWebhook<M extends object | undefined = Message | undefined> {
  /** 1-based, in arrival order (listen's `#N`). */
  readonly index: number;
  readonly receivedAt: Date;
  readonly method: string;
  /** As requested, query string included. */
  readonly path: string;
  readonly headers: RequestHeaders;
  /** The exact bytes received. */
  readonly rawBody: Buffer;
  /** The body parsed as JSON (read from `rawBody` when first asked for), or undefined when it is not JSON. */
  readonly body: unknown;
  /** The body when it is a webhook message, else undefined. */
  readonly message: M;
  readonly verdict: ReceivedVerdict;
  /** Signature (when checked) and shape both fine. */
  readonly valid: boolean;
  /** The status answered; null when a fault held or dropped it. */
  readonly status: number | null;
  /** The index of the rule (of `responses` or `respondWith`) that answered, or null. */
  readonly rule: number | null;
}

/** Fields that must all equal (`verdict` defaults to `valid`), or a test of your own (which sees every request). */
export type WebhookMatcher = RequestMatch | ((request: ReceivedWebhook) => boolean);

/**
 * The `message` of the requests a matcher object picks. One that names a `type`, an `event` (a
 * track's) or `kind: "message"` picks only requests whose body is a message, so it is defined: that
 * type's message when the verdict is `valid` (the default: its shape was checked), else an object
 * of that `type` whose other fields are unchecked. Any other matcher: `Message | undefined`.
 */
export type MatchedMessage<M extends RequestMatch> = (
  M extends { type: infer T extends MessageType }
    ? T
    : M extends { event: string }
      ? "track"
      : M extends { kind: "message" }
        ? MessageType
        : never
) extends infer T extends MessageType
  ? [T] extends [never]
    ? Message | undefined
    : [M[keyof M & "verdict"]] extends ["valid" | undefined]
      ? Extract<Message, { type: T }>
      : { type: T; [key: string]: unknown }
  : never;

export interface WaitOptions {
  /** Milliseconds or a duration (`2s`); default 4000, under vitest's and jest's own 5 s test timeout. */
  timeout?: number | string;
  /** How many matching requests to wait for; default 1. */
  count?: number;
}

export interface TestReceiver {
  /** `http://127.0.0.1:PORT`, no trailing slash: send to any path under it. */
  readonly url: string;
  readonly port: number;
  /** The requests received so far (since the last `reset`), oldest first, within `history`'s bounds. */
  readonly requests: readonly ReceivedWebhook[];
  /**
   * Resolves with the matching requests once `count` of them have arrived (those received before the
   * call included, while `requests` keeps them); rejects at the timeout with a list of what did arrive.
   * Never with none: `const [order] = await receiver.waitFor(…)` is defined. A matcher object that
   * names a message type gives requests whose `message` is that type's (MatchedMessage).
   */
  waitFor<const M extends RequestMatch>(
    matcher: M & { [key in Exclude<keyof M, keyof RequestMatch>]: never },
    options?: WaitOptions,
  ): Promise<[ReceivedWebhook<MatchedMessage<M>>, ...ReceivedWebhook<MatchedMessage<M>>[]]>;
  /** With a type guard, the requests are of the type it guards. */
  waitFor<R extends ReceivedWebhook>(matcher: (request: ReceivedWebhook) => request is R, options?: WaitOptions): Promise<[R, ...R[]]>;
  waitFor(matcher: WebhookMatcher, options?: WaitOptions): Promise<[ReceivedWebhook, ...ReceivedWebhook[]]>;
  /** Replaces the rules: per-test answers. Requests already answered keep theirs. */
  respondWith(rules: readonly ResponseRule[]): void;
  /** Forgets the requests, and puts the rules and faults back as they were given at start (for `beforeEach`). */
  reset(): void;
  /** Stops: answers in flight go out, waiting `waitFor`s reject. */
  close(): Promise<void>;
}
