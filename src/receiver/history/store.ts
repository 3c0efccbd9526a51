import type { ReceivedRequest } from "../received-request.js";
import type { RequestHeaders, RequestVerdict } from "../verdict.js";
import { keepResponse, keepVerdict, rowBytes, type KeptResponse, type KeptVerdict, type PeerResponse } from "./kept.js";

/** Default of `--ui-keep` (its option table repeats it, to stay light): the recording file is the full history, the page the recent one. */
export const DEFAULT_KEEP = 1_000;
/** Default of `--ui-history-mb` (likewise): what the kept rows may cost in memory (raw bodies, kept answers, headers). */
export const DEFAULT_HISTORY_MB = 64;

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
  verdict: KeptVerdict;
  /** The status the sender got (null: held or dropped by a fault flag). */
  status: number | null;
  fault: "timeout" | "drop" | null;
  injected: boolean;
  /** The app's answer when forwarding; a Resend target's answer for resent rows. */
  response: KeptResponse | null;
  /** The index of the --responses rule that answered it, when one did. */
  rule?: number | null;
  /** Resent rows only: the row resent, where to, and whether its body was edited first. */
  resend?: { of: number; ofLabel: string; url: string; edited?: boolean };
  /** What the row costs in memory, as the history bound counts it. */
  bytes: number;
}

/** A row as it is handed to the store, with the verdict and answer in full (the store keeps less). */
export interface NewInspected extends Omit<Inspected, "id" | "verdict" | "response" | "bytes"> {
  verdict: RequestVerdict | KeptVerdict;
  response: PeerResponse | KeptResponse | null;
}

export interface StoreLimits {
  /** Rows kept (`--ui-keep`); 0 keeps none but the latest received (the `r` key alone). */
  keep?: number;
  /** Bytes the kept rows may cost (`--ui-history-mb`); the newest row is kept whatever it costs. */
  maxBytes?: number;
  /** The first row's id (inspect numbers its resends after the recording's rows). */
  firstId?: number;
}

/** Why the oldest rows went: shown on the page and once in the terminal. */
export interface DropNotice {
  /** The oldest row still kept (older ids are gone). */
  oldestId: number;
  /** Rows dropped so far. */
  dropped: number;
  /** e.g. `oldest rows dropped: history over 64 MB (--ui-history-mb)`. */
  message: string;
}

/**
 * The last rows in memory, in arrival order, bounded in rows and in bytes,
 * with subscribers told of each new one (and of what it pushed out).
 */
export class RequestStore {
  readonly keep: number;
  readonly maxBytes: number;
  // Rows before `head` are gone (their slots cleared at once, the array compacted now and then).
  private rows: (Inspected | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private dropped = 0;
  private notice: DropNotice | null = null;
  private readonly listeners = new Set<(row: Inspected, dropped: DropNotice | null) => void>();
  private nextId: number;
  private latest: Inspected | undefined;

  constructor(limits: StoreLimits = {}) {
    this.keep = limits.keep ?? DEFAULT_KEEP;
    this.maxBytes = limits.maxBytes ?? DEFAULT_HISTORY_MB * 1024 * 1024;
    this.nextId = limits.firstId ?? 1;
  }

  add(row: NewInspected): Inspected {
    const stored = inspectedRow(this.nextId++, row);
    if (!stored.resend) this.latest = stored;
    let notice: DropNotice | null = null;
    if (this.keep > 0) {
      this.rows.push(stored);
      this.bytes += stored.bytes;
      notice = this.trim();
    }
    for (const listener of this.listeners) listener(stored, notice);
    return stored;
  }

  get(id: number): Inspected | undefined {
    const first = this.rows[this.head];
    if (!first || id < first.id) return undefined;
    // Ids are consecutive in arrival order, so the position is known.
    const row = this.rows[this.head + id - first.id];
    return row?.id === id ? row : undefined;
  }

  /** The newest and oldest rows' ids (0 when none is kept). */
  newestId(): number {
    return this.rows.at(-1)?.id ?? 0;
  }

  oldestId(): number {
    return this.rows[this.head]?.id ?? 0;
  }

  /** Oldest first. */
  list(): Inspected[] {
    return this.rows.slice(this.head) as Inspected[];
  }

  /** The newest row that listen received (not a resend), kept even when the list keeps nothing. */
  latestReceived(): Inspected | undefined {
    return this.latest;
  }

  /** The last reason rows were dropped, or null while nothing was. */
  dropNotice(): DropNotice | null {
    return this.notice;
  }

  /** Why row `id` is not kept (or never existed). */
  whyGone(id: number): string {
    const first = this.rows[this.head];
    if (this.notice && id < (first?.id ?? this.nextId)) return `request ${id} is no longer kept: ${this.notice.message}`;
    return `no request ${id}`;
  }

  subscribe(listener: (row: Inspected, dropped: DropNotice | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Drops the oldest rows past either bound; the notice says which bound, or null when none was passed. */
  private trim(): DropNotice | null {
    let reason: string | undefined;
    while (this.rows.length - this.head > this.keep) reason = this.dropOldest(`history over ${this.keep} request${this.keep === 1 ? "" : "s"} (--ui-keep)`);
    while (this.bytes > this.maxBytes && this.rows.length - this.head > 1)
      reason = this.dropOldest(`history over ${formatMb(this.maxBytes)} (--ui-history-mb)`);
    if (reason === undefined) return null;
    if (this.head > 1024 && this.head * 2 > this.rows.length) {
      this.rows = this.rows.slice(this.head);
      this.head = 0;
    }
    const oldest = this.rows[this.head] as Inspected;
    this.notice = { oldestId: oldest.id, dropped: this.dropped, message: `oldest rows dropped: ${reason}` };
    return this.notice;
  }

  private dropOldest(reason: string): string {
    const row = this.rows[this.head] as Inspected;
    this.rows[this.head] = undefined;
    this.head += 1;
    this.bytes -= row.bytes;
    this.dropped += 1;
    return reason;
  }
}

/** A row as the inspector keeps it: the verdict and answer cut to what is shown, its cost counted. */
export function inspectedRow(id: number, row: NewInspected): Inspected {
  const verdict = keepVerdict(row.verdict);
  const response = row.response && ("bodySize" in row.response ? row.response : keepResponse(row.response));
  const kept = { ...row, verdict, response };
  return { id, ...kept, bytes: rowBytes(kept) };
}

/** The row of a request the receiver answered, numbered `label`, with the answer it relayed (or none). */
export function receivedRow(request: ReceivedRequest, label: string, response: NewInspected["response"]): NewInspected {
  const { receivedAt, method, path, headers, raw, verdict, status, fault, injected, rule } = request;
  return { label, receivedAt, method, path, headers, raw, verdict, status, fault, injected, rule, response };
}

function formatMb(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`;
}
