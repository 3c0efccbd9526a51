import { arrivalBytes, arrivalOf, type Arrival, type ArrivalSource } from "../receiver/arrivals.js";
import { matches, type RequestMatch } from "../receiver/match.js";

/** What the control API's log keeps (docs/receiver.md#memory): the newest arrivals within both bounds. */
export const MAX_ARRIVALS = 100_000;
export const MAX_ARRIVAL_BYTES = 32 * 1024 * 1024;

/** A query of the log: a matcher and a time window, `since` inclusive and `until` exclusive, in ms since the epoch. */
export interface ArrivalQuery {
  match: RequestMatch;
  since?: number | undefined;
  until?: number | undefined;
}

interface Entry {
  arrival: Arrival;
  at: number;
  bytes: number;
}

/**
 * Every request listen received, in brief (no body, no headers), for the control API's list,
 * counts and waits: far more of them than the inspector's history keeps, since an entry costs a
 * few hundred bytes, and still bounded. Told of each arrival as it comes; listeners see each one.
 */
export class ArrivalLog {
  private entries: (Entry | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private received = 0;
  private dropped = 0;
  /** When the newest dropped arrival came: a window starting at or before it may miss some. */
  private droppedUntil = Number.NEGATIVE_INFINITY;
  private readonly listeners = new Set<(arrival: Arrival, at: number) => void>();

  constructor(private readonly limits: { entries: number; bytes: number } = { entries: MAX_ARRIVALS, bytes: MAX_ARRIVAL_BYTES }) {}

  add(request: ArrivalSource): void {
    const arrival = arrivalOf(request);
    const entry: Entry = { arrival, at: request.receivedAt.getTime(), bytes: arrivalBytes(arrival) };
    this.entries.push(entry);
    this.bytes += entry.bytes;
    this.received += 1;
    this.trim();
    for (const listener of this.listeners) listener(arrival, entry.at);
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
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i] as Entry;
      if (!inWindow(query, entry.at) || !matches(query.match, entry.arrival)) continue;
      if (each(entry.arrival) === false) return;
    }
  }

  /** The last `max` arrivals of the window (any verdict, no matcher), and how many the window holds. */
  recent(query: Pick<ArrivalQuery, "since" | "until">, max: number): { arrivals: Arrival[]; count: number } {
    const arrivals: Arrival[] = [];
    let count = 0;
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i] as Entry;
      if (!inWindow(query, entry.at)) continue;
      count += 1;
      arrivals.push(entry.arrival);
      if (arrivals.length > max) arrivals.shift();
    }
    return { arrivals, count };
  }

  private trim(): void {
    while (this.entries.length - this.head > this.limits.entries || (this.bytes > this.limits.bytes && this.entries.length - this.head > 1)) {
      const entry = this.entries[this.head] as Entry;
      this.entries[this.head] = undefined;
      this.head += 1;
      this.bytes -= entry.bytes;
      this.dropped += 1;
      this.droppedUntil = entry.at;
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}

export function inWindow(query: Pick<ArrivalQuery, "since" | "until">, at: number): boolean {
  return (query.since === undefined || at >= query.since) && (query.until === undefined || at < query.until);
}
