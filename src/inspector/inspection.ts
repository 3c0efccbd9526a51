import { routeFor, type ForwardRoutes } from "../receiver/forward-routes.js";
import type { ReceivedRequest } from "../receiver/received-request.js";
import type { ControlApi } from "../control/api.js";
import { receiverSecrets, type SignatureSettings } from "../receiver/signature-check.js";
import { resend } from "./resend.js";
import { startInspectorServer, type InspectorServer } from "./server.js";
import { RequestStore, receivedRow, type DropNotice, type Inspected, type StoreLimits } from "../receiver/history/index.js";

export interface InspectionOptions extends StoreLimits {
  /** listen's signing (docs/schemes.md): a resend is signed by its row's scheme with these secrets, and judged as listen judges. */
  signing?: SignatureSettings;
  /** One secret: shorthand for `signing: { secrets: [secret] }`. */
  secret?: string | undefined;
  /** listen --strict: a batch's elements are listed as judged (docs/receiver.md#shape-check). */
  strict?: boolean | undefined;
  /** listen --forward-to's routes: a row's route is its default Resend target. */
  routes?: ForwardRoutes | undefined;
  /** Called with each resent row once its answer is in (the terminal reports it). */
  onResent?: (row: Inspected) => void;
  /** Called when a bound first drops rows, once per bound (the terminal says so). */
  onDropped?: (notice: DropNotice) => void;
}

/**
 * What listen keeps of its requests for the page and the `r` key: the store,
 * Resend, and (with --ui) the page's server. Kept apart from the receiver,
 * which only tells it about each request.
 */
export class Inspection {
  readonly store: RequestStore;
  private receiverUrl = "";
  private resends = 0;
  private server: InspectorServer | undefined;

  private readonly signing: SignatureSettings;

  constructor(private readonly options: InspectionOptions) {
    this.store = new RequestStore(options);
    this.signing = options.signing ?? { secrets: receiverSecrets(options) };
    const told = new Set<string>();
    this.store.subscribe((_row, dropped) => {
      if (!dropped || told.has(dropped.message)) return;
      told.add(dropped.message);
      options.onDropped?.(dropped);
    });
  }

  /** The receiver's observer: one row per request listen answered. */
  readonly add = (request: ReceivedRequest): void => {
    // Without a page only the `r` key reads rows, and it needs no answer.
    const forwarded = this.store.keep > 0 ? request.forwarded : null;
    // A 502/504 is listen's answer, not the app's: the row keeps only why and how long.
    const response =
      forwarded &&
      (forwarded.fromApp
        ? { status: forwarded.status, ms: forwarded.ms, headers: forwarded.headers, body: forwarded.body, error: null }
        : { status: null, ms: forwarded.ms, headers: {}, body: Buffer.alloc(0), error: forwarded.error });
    this.store.add(receivedRow(request, String(request.index), response));
  };

  /** Where Resend goes unless the page names a URL: the row's route when forwarding, else listen itself. */
  defaultTarget(row: Inspected): string {
    return (this.options.routes && routeFor(this.options.routes, row.verdict)) ?? this.receiverUrl;
  }

  setReceiverUrl(url: string): void {
    this.receiverUrl = url;
  }

  /** Resends row `id` (to `url` or the default target; `body`: edited bytes); resolves with the new row. */
  async resend(id: number, url?: string, body?: Buffer): Promise<Inspected | undefined> {
    const original = this.store.get(id);
    return original ? this.resendRow(original, url, body) : undefined;
  }

  /** The `r` key: resends the newest request listen received. */
  async resendLatest(): Promise<Inspected | undefined> {
    const latest = this.store.latestReceived();
    return latest ? this.resendRow(latest) : undefined;
  }

  private async resendRow(original: Inspected, url?: string, body?: Buffer): Promise<Inspected> {
    const resent = await resend(original, url ?? this.defaultTarget(original), { signing: this.signing, body });
    const row = this.store.add({ ...resent, label: `R${++this.resends}` });
    this.options.onResent?.(row);
    return row;
  }

  /** Serves the page on 127.0.0.1 (`port` 0 = any), with listen's control API beside it; resolves with its URL. */
  async serve(port: number, control?: ControlApi): Promise<string> {
    this.server = await startInspectorServer({
      control,
      port,
      store: this.store,
      secret: this.signing.secrets,
      strict: this.options.strict ?? false,
      routes: this.options.routes ?? null,
      receiverUrl: this.receiverUrl,
      resend: (id, url, body) => this.resend(id, url, body),
    });
    return this.server.url;
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
