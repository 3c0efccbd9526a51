import type { Secrets } from "../safe-text/redact.js";
import type { DeliveryResult } from "../delivery/types.js";
import { ResultsFile } from "./results-file.js";
import { ResultsOrder } from "./results-order.js";
import { resultLine, type ResultLine } from "./results.js";

/** What a results line needs of a sent message: replay's entries carry these, so regress/ imports nothing of replay. */
export interface ResultEntry {
  line: number;
  /** Undefined for a body sent raw (not a known message). */
  type: string | undefined;
  orderKey: string | undefined;
  messageId: string | undefined;
  event: string | undefined;
}

/**
 * Where replay's per-message results go (`--results FILE`, `--compare`):
 * admitted in input order as the sending pass reads them, released in that
 * order as messages finish, each release written with one write and handed to
 * `onResults`. A message interrupted or never started has no result line.
 */
export class ResultsSink {
  private readonly order: ResultsOrder<ResultLine>;
  private readonly file: ResultsFile | undefined;
  private room: (() => void) | undefined;
  private readonly secret: Secrets;

  constructor(
    /** `secret`: masked in URLs, errors and answers (4+ characters, see safe-text/redact.ts). */
    options: { path?: string | undefined; input: string; secret?: Secrets },
    private readonly onResults: ((lines: readonly ResultLine[]) => void) | undefined,
    /** Finished results held for an earlier line before the reader waits (ResultsOrder's limit). */
    held?: number,
  ) {
    this.order = new ResultsOrder<ResultLine>(held);
    this.secret = options.secret;
    this.file = options.path !== undefined ? new ResultsFile(options.path, { input: options.input }) : undefined;
  }

  /** Before the entry goes to the dispatcher (the sending pass reads in input order). */
  admit(entry: ResultEntry): void {
    this.order.admit(entry.line);
  }

  /**
   * Resolves once few enough finished results wait for an earlier one (a message retrying for
   * hours), or when the run stops: the dispatcher drops its unstarted messages only after its
   * source stops reading, so waiting on past a stop would never end.
   */
  async waitForRoom(signal: AbortSignal | undefined): Promise<void> {
    while (this.order.isFull && signal?.aborted !== true) {
      await new Promise<void>((resolve) => {
        const stop = (): void => resolve();
        signal?.addEventListener("abort", stop, { once: true });
        this.room = () => {
          signal?.removeEventListener("abort", stop);
          resolve();
        };
      });
    }
  }

  finished(entry: ResultEntry, result: DeliveryResult): void {
    if (result.interrupted) return this.dropped(entry);
    const facts = { type: entry.type ?? "raw", userId: entry.orderKey, messageId: entry.messageId, event: entry.event };
    const line = resultLine({ line: entry.line, facts, delivered: result.delivered, skipped: result.skipped, urls: result.urls }, { secret: this.secret });
    this.release(this.order.finish(entry.line, line));
  }

  dropped(entry: ResultEntry): void {
    this.release(this.order.drop(entry.line));
  }

  close(): void {
    this.file?.close();
  }

  private release(lines: ResultLine[]): void {
    if (lines.length === 0) return;
    this.file?.write(lines);
    this.onResults?.(lines);
    const wake = this.room;
    this.room = undefined;
    wake?.();
  }
}
