import { sleep, systemClock, type Clock } from "../util/clock.js";
import { formatDuration } from "../util/duration.js";
import { statusError } from "./answer-excerpt.js";
import { contentTypeOf, keepBody } from "./captured-body.js";
import type { AttemptReport, DeliveryTransport, SendOptions } from "./transport.js";
import type { PreparedRequest } from "./types.js";

/** How the fake answers one attempt. */
export type FakeAnswer =
  | number
  | { status: number; retryAfterMs?: number; headers?: Record<string, string>; body?: string; latencyMs?: number }
  /** No answer: the attempt times out after the engine's deadline. */
  | "hang"
  | { network: string }
  | { tls: string };

export interface FakeRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Clock time the attempt started. */
  at: number;
  /** 1-based attempt number for this URL and body. */
  attempt: number;
  /** The engine asked for the response's headers and body. */
  keepResponse: boolean;
}

export type FakeResponder = (request: PreparedRequest, attempt: number) => FakeAnswer | Promise<FakeAnswer>;

export interface FakeTransportOptions {
  /** Time for latencies and deadlines (a VirtualClock in tests). */
  clock?: Clock;
  /** Default 200 for every attempt. */
  respond?: FakeResponder;
  /** Time before each answer. Default 0. */
  latencyMs?: number;
}

/**
 * A transport with no sockets, for unit tests of the engine and the dispatcher
 * in virtual time: answers come from `respond`, deadlines and latencies run on
 * the clock, and every attempt is recorded.
 */
export class FakeTransport implements DeliveryTransport {
  readonly requests: FakeRequest[] = [];
  private readonly clock: Clock;
  private readonly respond: FakeResponder;
  private readonly latencyMs: number;
  private readonly attempts = new Map<string, number>();
  private inFlight = 0;
  closed = false;

  constructor(options: FakeTransportOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.respond = options.respond ?? (() => 200);
    this.latencyMs = options.latencyMs ?? 0;
  }

  /** Attempts started and not answered yet. */
  get pending(): number {
    return this.inFlight;
  }

  async send(request: PreparedRequest, options: SendOptions): Promise<AttemptReport> {
    const { timeoutMs, keepResponse = false, captureResponse = false } = options;
    const body = request.body.toString("utf8");
    const key = `${request.url} ${body}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    const started = this.clock.now();
    this.requests.push({ url: request.url, body, headers: request.headers, at: started, attempt, keepResponse });
    this.inFlight += 1;
    try {
      const answer = await this.respond(request, attempt);
      const latency = typeof answer === "object" && "status" in answer ? (answer.latencyMs ?? this.latencyMs) : this.latencyMs;
      if (answer === "hang" || latency >= timeoutMs) {
        await sleep(this.clock, timeoutMs);
        return { outcome: { kind: "timeout" }, status: null, error: `timeout: no response within ${formatDuration(timeoutMs)}`, ms: timeoutMs };
      }
      if (latency > 0) await sleep(this.clock, latency);
      return report(answer, keepResponse, captureResponse, this.clock.now() - started);
    } finally {
      this.inFlight -= 1;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

function report(answer: Exclude<FakeAnswer, "hang">, keepResponse: boolean, capture: boolean, ms: number): AttemptReport {
  if (typeof answer === "object" && "network" in answer) {
    return { outcome: { kind: "network", code: answer.network }, status: null, error: `network: ${answer.network}`, ms };
  }
  if (typeof answer === "object" && "tls" in answer) {
    return { outcome: { kind: "tls", code: answer.tls }, status: null, error: `TLS: ${answer.tls}; nothing was sent`, ms };
  }
  const { status, retryAfterMs, headers = {}, body = "" } = typeof answer === "number" ? { status: answer } : answer;
  const outcome = retryAfterMs !== undefined ? { kind: "status" as const, status, retryAfterMs } : { kind: "status" as const, status };
  const error = status >= 200 && status < 300 ? null : statusError(status, body);
  return {
    outcome,
    status,
    error,
    ms,
    ...(keepResponse ? { response: { headers, body } } : {}),
    ...(capture ? { captured: { contentType: contentTypeOf(headers), body: keepBody(body) } } : {}),
  };
}

/** A responder giving these answers in turn for every URL and message (the last one repeats). */
export function answers(...list: FakeAnswer[]): FakeResponder {
  return (_request, attempt) => list[Math.min(attempt, list.length) - 1] ?? 200;
}

/** A responder per URL; URLs not named answer 200. */
export function byUrl(responders: Record<string, FakeResponder>): FakeResponder {
  return (request, attempt) => responders[request.url]?.(request, attempt) ?? 200;
}
