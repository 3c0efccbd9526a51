import type { Arrival, ArrivalSource } from "../receiver/arrivals.js";
import { matches, type RequestFacts, type RequestMatch } from "../receiver/match.js";
import { ArrivalRing } from "./arrival-ring.js";

/** What the control API's log keeps (docs/receiver.md#memory): the newest arrivals within both bounds. */
export const MAX_ARRIVALS = 100_000;
export const MAX_ARRIVAL_BYTES = 32 * 1024 * 1024;

/** A query of the log: a matcher and a time window, `since` inclusive and `until` exclusive, in ms since the epoch. */
export interface ArrivalQuery {
  match: RequestMatch;
  since?: number | undefined;
  until?: number | undefined;
}

/**
 * Every request listen received, in brief (no body, no headers), for the control API's list,
 * counts and waits: far more of them than the inspector's history keeps, since an entry costs a
 * few hundred bytes, and still bounded. Told of each arrival as it comes; listeners see each one.
 * Stored by column (arrival-ring.ts): the arrivals are made again when asked for.
 */
export class ArrivalLog {
  private readonly ring: ArrivalRing;
  private bytes = 0;
  private received = 0;
  private dropped = 0;
  /** When the newest dropped arrival came: a window starting at or before it may miss some. */
  private droppedUntil = Number.NEGATIVE_INFINITY;
  private readonly listeners = new Set<(arrival: Arrival, at: number) => void>();

  constructor(private readonly limits: { entries: number; bytes: number } = { entries: MAX_ARRIVALS, bytes: MAX_ARRIVAL_BYTES }) {
    this.ring = new ArrivalRing(Math.max(1, limits.entries));
  }

  add(request: ArrivalSource): void {
    if (this.ring.full) this.dropOldest();
    this.bytes += this.ring.push(request);
    this.received += 1;
    while (this.bytes > this.limits.bytes && this.ring.length > 1) this.dropOldest();
    // Made only for someone listening (a wait in progress): most arrivals are never asked for.
    if (this.listeners.size === 0) return;
    const arrival = this.ring.arrival(this.ring.length - 1);
    const at = request.receivedAt.getTime();
    for (const listener of this.listeners) listener(arrival, at);
  }

  subscribe(listener: (arrival: Arrival, at: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** How many arrivals came, and how many of them the log no longer holds. */
  get totals(): { received: number; dropped: number } {
    return { received: this.received, dropped: this.dropped };
  }

  /** Whether every arrival of a window starting at `since` is still held. */
  complete(since: number | undefined): boolean {
    return this.dropped === 0 || (since !== undefined && since > this.droppedUntil);
  }

  /** The arrivals in the query's window that match, oldest first; `each` stops early by returning false. */
  scan(query: ArrivalQuery, each: (arrival: Arrival) => boolean | undefined): void {
    const facts = {} as RequestFacts;
    for (let i = 0; i < this.ring.length; i++) {
      if (!inWindow(query, this.ring.atOf(i)) || !matches(query.match, this.ring.factsOf(i, facts))) continue;
      if (each(this.ring.arrival(i)) === false) return;
    }
  }

  /** The last `max` arrivals of the window (any verdict, no matcher), and how many the window holds. */
  recent(query: Pick<ArrivalQuery, "since" | "until">, max: number): { arrivals: Arrival[]; count: number } {
    const positions: number[] = [];
    let count = 0;
    for (let i = 0; i < this.ring.length; i++) {
      if (!inWindow(query, this.ring.atOf(i))) continue;
      count += 1;
      positions.push(i);
      if (positions.length > max) positions.shift();
    }
    return { arrivals: positions.map((i) => this.ring.arrival(i)), count };
  }

  private dropOldest(): void {
    const { at, bytes } = this.ring.shift();
    this.bytes -= bytes;
    this.dropped += 1;
    this.droppedUntil = at;
  }
}

export function inWindow(query: Pick<ArrivalQuery, "since" | "until">, at: number): boolean {
  return (query.since === undefined || at >= query.since) && (query.until === undefined || at < query.until);
}
