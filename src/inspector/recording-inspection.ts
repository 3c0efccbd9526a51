import { basename } from "node:path";
import { UsageError } from "../errors.js";
import { rowFromLine, inspectedRow, RequestStore, type Inspected } from "../receiver/history/index.js";
import type { SignatureChecker, SignatureSettings } from "../receiver/signature-check.js";
import { RecordingIndex } from "./recording-index.js";
import { resend } from "./resend.js";
import { storeNewestFirst, type RowSource } from "./rows.js";
import type { Candidate } from "./search.js";
import { startInspectorServer, type InspectorServer } from "./server.js";
import { recordLine } from "./view.js";

/** Resends kept in memory while a recording is open, as listen's page keeps its rows. */
const KEPT_RESENDS = 1_000;
/** Distinct rows one Download of a recording may name. */
const MAX_DOWNLOAD_IDS = 10_000;

export interface RecordingInspectionOptions {
  /** inspect's signature check, built once: its settings sign resends, and it checks the recorded signatures again (each at the time it arrived); without secrets the recorded verdicts are shown. */
  checker?: SignatureChecker | undefined;
  strict?: boolean | undefined;
  /** Called with each resent row once its answer is in. */
  onResent?: (row: Inspected) => void;
}

/**
 * `inspect FILE`: a listen recording in the inspector page. Rows are the file's lines, read and
 * judged only when the page shows or searches them (RecordingIndex keeps where each line is);
 * the file is never written. Resends go to a URL the page names and are kept in memory.
 */
export class RecordingInspection implements RowSource {
  readonly maxIds = MAX_DOWNLOAD_IDS;
  private readonly resends: RequestStore;
  private resendCount = 0;
  private server: InspectorServer | undefined;
  private readonly signing: SignatureSettings;
  private readonly checker: SignatureChecker | undefined;

  private constructor(
    readonly index: RecordingIndex,
    private readonly options: RecordingInspectionOptions,
  ) {
    this.resends = new RequestStore({ keep: KEPT_RESENDS, firstId: index.count + 1 });
    this.signing = options.checker?.settings ?? { secrets: [] };
    this.checker = this.signing.secrets.length === 0 ? undefined : options.checker;
  }

  /** The requests shown: the lines indexed. */
  get requests(): number {
    return this.index.count - this.index.firstId + 1;
  }

  static async open(path: string, options: RecordingInspectionOptions): Promise<RecordingInspection> {
    return new RecordingInspection(await RecordingIndex.open(path), options);
  }

  async get(id: number): Promise<Inspected | undefined> {
    if (!this.index.has(id)) return this.resends.get(id);
    const line = await this.index.line(id);
    return line && this.toRow(line.id, line.number, line.text);
  }

  whyGone(id: number): string {
    if (id <= this.index.count && id > 0)
      return `request ${id} is not indexed: the inspector indexes the newest ${this.index.count - this.index.firstId + 1} lines of a recording`;
    return this.resends.whyGone(id);
  }

  /** Resends first (they are the newest), then the file's lines from its end. */
  async *newestFirst(before?: number): AsyncGenerator<Candidate> {
    yield* storeNewestFirst(this.resends, before);
    for await (const line of this.index.backward(Math.min(before ?? Number.MAX_SAFE_INTEGER, this.index.count + 1))) {
      yield { id: line.id, text: line.text, row: () => Promise.resolve(this.toRow(line.id, line.number, line.text)) };
    }
  }

  /** A file row's line as it stands in the file; a resend's as listen would record it. */
  async line(id: number): Promise<string | undefined> {
    if (this.index.has(id)) return `${(await this.index.line(id))?.text ?? ""}\n`;
    const row = this.resends.get(id);
    return row && recordLine(row, this.signing.secrets);
  }

  /** Resends row `id` to `url` (required: a recording has no receiver), `body` in place of its bytes when edited. */
  async resend(id: number, url: string | undefined, body?: Buffer): Promise<Inspected | undefined> {
    if (url === undefined) throw new UsageError("type the URL to resend to: a recording has no receiver of its own");
    const original = await this.get(id);
    if (!original) return undefined;
    const resent = await resend(original, url, { signing: this.signing, body });
    const row = this.resends.add({ ...resent, label: `R${++this.resendCount}` });
    this.options.onResent?.(row);
    return row;
  }

  /** Serves the page on 127.0.0.1 (`port` 0 = any); resolves with its URL. */
  async serve(port: number): Promise<string> {
    const { index } = this;
    this.server = await startInspectorServer({
      port,
      portField: "port",
      store: this.resends,
      source: this,
      secret: this.signing.secrets,
      strict: this.options.strict ?? false,
      routes: null,
      receiverUrl: null,
      resend: (id, url, body) => this.resend(id, url, body),
      info: {
        file: basename(index.path),
        size: index.size,
        requests: this.requests,
        newestId: index.count,
        skipped: index.skipped,
        skips: index.skips,
      },
    });
    return this.server.url;
  }

  async close(): Promise<void> {
    await this.server?.close();
    await this.index.close();
  }

  /** Row `id` from its line: labelled by its line number, judged as listen judged it. */
  private toRow(id: number, number: number, text: string): Inspected {
    const row = rowFromLine(text, number, { checker: this.checker, strict: this.options.strict ?? false });
    return inspectedRow(id, { ...row, label: String(number) });
  }
}
