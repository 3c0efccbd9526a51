import type { IncomingMessage, ServerResponse } from "node:http";
import { UsageError, WebhookCliError } from "../errors.js";
import type { Arrival } from "../receiver/arrivals.js";
import { MATCH_FIELDS, matches } from "../receiver/match.js";
import { parseMatch } from "../receiver/rules-file.js";
import { parseDuration } from "../util/duration.js";
import { inWindow, type ArrivalLog, type ArrivalQuery } from "./arrival-log.js";

/** Long-polls waiting at once (one per `expect`); more are refused with 503, as the inspector's streams are. */
export const DEFAULT_MAX_WAITERS = 16;
/** The longest one poll waits; a longer wait polls again. */
export const MAX_WAIT_MS = 60_000;
const DEFAULT_WAIT_MS = 30_000;
/** Rows one answer lists at most (the counts cover them all). */
const MAX_LIMIT = 1_000;
const DEFAULT_LIMIT = 100;
/** Arrivals a wait's answer shows of its window, for a summary of what did arrive. */
const RECENT = 20;
const PARAMETERS = new Set<string>([...MATCH_FIELDS, "since", "until", "after", "limit", "count", "timeout"]);

export type JsonSender = (res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>) => void;

interface Waiter {
  res: ServerResponse;
  query: ArrivalQuery;
  count: number;
  limit: number;
  matched: number;
  requests: Arrival[];
  timer: NodeJS.Timeout;
}

/**
 * The control API (docs/receiver.md#control-api) on listen's control port, never on the webhook
 * port: `GET /api/received` lists and counts the received requests with their verdicts, filtered;
 * `GET /api/wait` answers once enough have matched, or at its timeout. Read-only, JSON.
 */
export class ControlApi {
  private readonly waiters = new Set<Waiter>();
  /** Listening to the log only while a wait is held: an arrival is made for listeners, and most have none. */
  private unsubscribe: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly log: ArrivalLog,
    private readonly send: JsonSender,
    readonly maxWaiters = DEFAULT_MAX_WAITERS,
  ) {}

  handles(pathname: string): boolean {
    return pathname === "/api/received" || pathname === "/api/wait";
  }

  handle(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (req.method !== "GET") return this.send(res, 405, { error: `${url.pathname} answers GET only` }, { allow: "GET" });
    let parsed: Parsed;
    try {
      parsed = parse(url.searchParams);
    } catch (error) {
      if (error instanceof WebhookCliError) return this.send(res, 400, { error: error.describe() });
      throw error;
    }
    if (url.pathname === "/api/received" || this.closed) return this.list(res, parsed);
    this.wait(res, parsed);
  }

  /** listen is stopping: every wait is answered now with what it has, marked `stopped`. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) this.answer(waiter, true);
  }

  private list(res: ServerResponse, { query, after, limit }: Parsed): void {
    const requests: Arrival[] = [];
    let matched = 0;
    let later = 0;
    this.log.scan(query, (arrival) => {
      matched += 1;
      if (arrival.index <= after) return undefined;
      later += 1;
      if (requests.length < limit) requests.push(arrival);
      return undefined;
    });
    this.send(res, 200, { ...this.totals(query), matched, requests, more: later > requests.length });
  }

  private wait(res: ServerResponse, { query, limit, count, timeoutMs }: Parsed): void {
    if (this.waiters.size >= this.maxWaiters) {
      const error = `too many waits at once: at most ${this.maxWaiters} long-polls are held; retry when one ends`;
      return this.send(res, 503, { error, limit: this.maxWaiters }, { "retry-after": "1" });
    }
    const waiter: Waiter = { res, query, count, limit, matched: 0, requests: [], timer: setTimeout(() => this.answer(waiter, false), timeoutMs) };
    this.log.scan(query, (arrival) => void this.note(waiter, arrival));
    this.waiters.add(waiter);
    this.unsubscribe ??= this.log.subscribe((arrival, at) => this.arrived(arrival, at));
    res.once("close", () => this.drop(waiter));
    if (waiter.matched >= count) this.answer(waiter, false);
  }

  private arrived(arrival: Arrival, at: number): void {
    for (const waiter of this.waiters) {
      if (!inWindow(waiter.query, at) || !matches(waiter.query.match, arrival)) continue;
      this.note(waiter, arrival);
      if (waiter.matched >= waiter.count) this.answer(waiter, false);
    }
  }

  private note(waiter: Waiter, arrival: Arrival): void {
    waiter.matched += 1;
    if (waiter.requests.length < waiter.limit) waiter.requests.push(arrival);
  }

  private answer(waiter: Waiter, stopped: boolean): void {
    if (!this.drop(waiter)) return;
    const { query } = waiter;
    const recent = this.log.recent(query, RECENT);
    this.send(waiter.res, 200, {
      met: waiter.matched >= waiter.count,
      count: waiter.count,
      matched: waiter.matched,
      ...this.totals(query),
      ...(stopped ? { stopped: true } : {}),
      requests: waiter.requests,
      window: { received: recent.count, recent: recent.arrivals },
    });
  }

  private drop(waiter: Waiter): boolean {
    clearTimeout(waiter.timer);
    const held = this.waiters.delete(waiter);
    if (this.waiters.size === 0) {
      this.unsubscribe?.();
      this.unsubscribe = undefined;
    }
    return held;
  }

  private totals(query: ArrivalQuery): { received: number; dropped: number; complete: boolean } {
    return { ...this.log.totals, complete: this.log.complete(query.since) };
  }
}

interface Parsed {
  query: ArrivalQuery;
  after: number;
  limit: number;
  count: number;
  timeoutMs: number;
}

/** The query string: a matcher's fields, a window, paging and the wait's count and timeout; an unknown name is refused. */
function parse(params: URLSearchParams): Parsed {
  for (const name of params.keys()) if (!PARAMETERS.has(name)) throw problem(`unknown parameter "${name}": expected ${[...PARAMETERS].join(", ")}`);
  const fields: Record<string, string> = {};
  for (const field of MATCH_FIELDS) {
    const value = params.get(field);
    if (value !== null) fields[field] = value;
  }
  const timeout = params.get("timeout");
  return {
    query: { match: parseMatch(fields, {}), since: time(params, "since"), until: time(params, "until") },
    after: whole(params, "after", 0, 0),
    limit: whole(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
    count: whole(params, "count", 1, 1),
    timeoutMs: Math.min(MAX_WAIT_MS, timeout === null ? DEFAULT_WAIT_MS : /^\d+$/.test(timeout) ? Number(timeout) : parseDuration(timeout, { key: "timeout" })),
  };
}

/** An ISO 8601 date-time, or milliseconds since the epoch. */
function time(params: URLSearchParams, name: string): number | undefined {
  const value = params.get(name);
  if (value === null) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (Number.isNaN(ms)) throw problem(`${name}: "${value}" is not an ISO 8601 date-time or milliseconds since the epoch`);
  return ms;
}

function whole(params: URLSearchParams, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = params.get(name);
  if (value === null) return fallback;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max)) throw problem(`${name}: "${value}" is not a whole number from ${min} to ${max}`);
  return number;
}

function problem(message: string): WebhookCliError {
  return new UsageError(message);
}
