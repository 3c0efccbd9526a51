import type { ServerResponse } from "node:http";
import { writeOrWait } from "../http/loopback-api.js";
import type { DropNotice, Inspected, RequestStore } from "../receiver/history/index.js";
import { summarize, type RowSummary } from "./view.js";

/** Live streams open at once (one per open page); more are refused. */
export const DEFAULT_MAX_STREAMS = 16;
/** How much of the snapshot one event carries, in bytes of JSON. */
const BATCH_BYTES = 64 * 1024;
/** The longest text of a row the list shows (user, event name, path…); the detail shows it whole. */
const LIST_TEXT_MAX = 256;
const HEARTBEAT_MS = 15_000;

/** One open stream: how far it got, and whether it waits for its client to read. */
interface Client {
  res: ServerResponse;
  /** Id of the last row sent. */
  sent: number;
  /** Rows up to this id were kept when the stream opened: they go in batches (`rows`), later ones one by one (`row`). */
  snapshotEnd: number;
  waiting: boolean;
  /** The drop notice it was last told of (the store's rows it may still show). */
  toldDrop: DropNotice | null;
}

/**
 * The row list as server-sent events: `hello` (the page's settings and the
 * first rows), `rows` (the rest of the kept rows, in batches), then `row` for
 * each new one. Rows are pulled from the store at the pace each client reads:
 * nothing waits in memory per client but what its socket holds (one event past
 * the high-water mark), so clients that never read cost almost nothing. A client
 * so far behind that rows it has not received have left the store is closed
 * (a page reconnects and starts from a fresh snapshot).
 */
export class EventStreams {
  private readonly clients = new Set<Client>();
  private newest: number;
  private lastRowEvent: { id: number; text: string } | undefined;
  /** The store's latest drop notice: every client is told of it once it has the rows before it. */
  private drop: DropNotice | null;
  private readonly unsubscribe: () => void;
  private heartbeat: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: RequestStore,
    readonly maxClients = DEFAULT_MAX_STREAMS,
  ) {
    this.newest = store.list().at(-1)?.id ?? 0;
    this.drop = store.dropNotice();
    this.unsubscribe = store.subscribe((row, dropped) => {
      this.newest = row.id;
      if (dropped) this.drop = dropped;
      for (const client of this.clients) this.pump(client);
    });
  }

  /** Why one more stream cannot open, or null. */
  refusal(): string | null {
    if (this.clients.size < this.maxClients) return null;
    return `too many inspector tabs open: at most ${this.maxClients} live streams at once; close one and this page connects`;
  }

  /** Starts a stream on `res` (its head already written) with `settings` in its hello. */
  open(res: ServerResponse, settings: Record<string, unknown>): void {
    const first = this.store.list()[0]?.id ?? this.newest + 1;
    // The hello's settings carry the drop notice of the moment.
    const client: Client = { res, sent: first - 1, snapshotEnd: this.newest, waiting: false, toldDrop: this.drop };
    this.clients.add(client);
    res.on("close", () => {
      this.clients.delete(client);
      if (this.clients.size === 0) this.stopHeartbeat();
    });
    this.startHeartbeat();
    const rows = `"rows":[${this.batch(client).join(",")}]`;
    const meta = JSON.stringify(settings).slice(1, -1);
    this.send(client, `retry: 1000\nevent: hello\ndata: {${meta === "" ? rows : `${meta},${rows}`}}\n\n`);
    this.pump(client);
  }

  /** Ends every stream (the server is closing). */
  close(): void {
    this.unsubscribe();
    this.stopHeartbeat();
    for (const client of this.clients) client.res.end();
  }

  private pump(client: Client): void {
    while (!client.res.destroyed) {
      const id = client.sent + 1;
      if (id > this.newest) return this.tellDrop(client);
      const row = this.store.get(id);
      // The next row it needs has left the store: whatever it got would have a gap.
      if (!row) return void client.res.destroy();
      if (client.waiting) return;
      if (id <= client.snapshotEnd) this.send(client, `event: rows\ndata: [${this.batch(client).join(",")}]\n\n`);
      else {
        client.sent = id;
        this.send(client, this.rowEvent(row));
      }
    }
  }

  /** Once a client has every row, the page is told which old rows listen dropped, and why. */
  private tellDrop(client: Client): void {
    if (client.waiting || client.toldDrop === this.drop || this.drop === null) return;
    client.toldDrop = this.drop;
    this.send(client, `event: dropped\ndata: ${JSON.stringify(this.drop)}\n\n`);
  }

  /** Summaries of the snapshot's next rows, about BATCH_BYTES of them. */
  private batch(client: Client): string[] {
    const parts: string[] = [];
    let bytes = 0;
    while (client.sent < client.snapshotEnd && bytes < BATCH_BYTES) {
      const row = this.store.get(client.sent + 1);
      if (!row) break;
      const json = JSON.stringify(listSummary(row));
      parts.push(json);
      bytes += json.length;
      client.sent = row.id;
    }
    return parts;
  }

  /** Every client gets a new row at about the same time: it is serialized once (keeping its id, not the row). */
  private rowEvent(row: Inspected): string {
    if (this.lastRowEvent?.id !== row.id) this.lastRowEvent = { id: row.id, text: `event: row\ndata: ${JSON.stringify(listSummary(row))}\n\n` };
    return this.lastRowEvent.text;
  }

  /** Writes, and stops writing to a client whose socket is past its high-water mark until it has taken what was written. */
  private send(client: Client, text: string): void {
    const more = writeOrWait(client.res, text, () => {
      client.waiting = false;
      this.pump(client);
    });
    if (!more) client.waiting = true;
  }

  private startHeartbeat(): void {
    this.heartbeat ??= setInterval(() => {
      for (const client of this.clients) if (!client.waiting) this.send(client, ": keep-alive\n\n");
    }, HEARTBEAT_MS);
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

/** A row as the list shows it: its texts cut to LIST_TEXT_MAX, so a summary stays small whatever the body holds. */
export function listSummary(row: Inspected): RowSummary {
  const summary: Record<string, unknown> = { ...summarize(row) };
  for (const [key, value] of Object.entries(summary)) if (typeof value === "string") summary[key] = clip(value);
  return summary as unknown as RowSummary;
}

function clip(text: string): string {
  if (text.length <= LIST_TEXT_MAX) return text;
  const code = text.charCodeAt(LIST_TEXT_MAX - 1);
  // Never split a surrogate pair.
  const end = code >= 0xd800 && code <= 0xdbff ? LIST_TEXT_MAX - 1 : LIST_TEXT_MAX;
  return `${text.slice(0, end)}…`;
}
