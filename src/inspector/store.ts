import type { RequestHeaders, RequestVerdict } from "../receiver/verdict.js";

/** Default of `--ui-keep`: the recording file is the full history, the page the recent one. */
const DEFAULT_KEEP = 1_000;

/** An answer from an HTTP peer: the app behind --forward-to, or a Resend target. */
export interface PeerResponse {
  /** null when no status arrived (unreachable, timed out). */
  status: number | null;
  ms: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  error: string | null;
}

/** One row of the inspector: a request listen received, or one the inspector resent. */
export interface Inspected {
  /** The store's own sequence, used in the page's URLs. */
  id: number;
  /** What the page and the terminal show: `3` for listen's request #3, `R1` for the first resend. */
  label: string;
  receivedAt: Date;
  method: string;
  path: string;
  headers: RequestHeaders;
  raw: Buffer;
  verdict: RequestVerdict;
  /** The status the sender got (null: held or dropped by a fault flag). */
  status: number | null;
  fault: "timeout" | "drop" | null;
  injected: boolean;
  /** The app's answer when forwarding; a Resend target's answer for resent rows. */
  response: PeerResponse | null;
  /** Resent rows only: the row resent and where to. */
  resend?: { of: number; ofLabel: string; url: string };
}

export type NewInspected = Omit<Inspected, "id">;

/** The last N requests in memory, in arrival order, with subscribers told of each new one. */
export class RequestStore {
  private readonly rows: Inspected[] = [];
  private readonly listeners = new Set<(row: Inspected) => void>();
  private nextId = 1;
  private latest: Inspected | undefined;

  constructor(readonly keep: number = DEFAULT_KEEP) {}

  add(row: NewInspected): Inspected {
    const stored: Inspected = { id: this.nextId++, ...row };
    this.rows.push(stored);
    if (!stored.resend) this.latest = stored;
    // Dropping from the front in bulk keeps add() O(1) amortised.
    if (this.rows.length > this.keep + 64) this.rows.splice(0, this.rows.length - this.keep);
    for (const listener of this.listeners) listener(stored);
    return stored;
  }

  get(id: number): Inspected | undefined {
    // Only the last `keep` rows are visible (up to 64 older ones wait to be dropped in bulk).
    const visible = this.firstVisible();
    const first = this.rows[visible];
    if (!first || id < first.id) return undefined;
    // Ids are consecutive in arrival order, so the position is known.
    const row = this.rows[visible + id - first.id];
    return row?.id === id ? row : undefined;
  }

  /** Oldest first, at most `keep`. */
  list(): Inspected[] {
    const visible = this.firstVisible();
    return visible > 0 ? this.rows.slice(visible) : this.rows;
  }

  private firstVisible(): number {
    return Math.max(0, this.rows.length - this.keep);
  }

  /** The newest row that listen received (not a resend). */
  latestReceived(): Inspected | undefined {
    return this.latest;
  }

  subscribe(listener: (row: Inspected) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
