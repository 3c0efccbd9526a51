import type { DeliveryResult } from "../delivery/types.js";
import type { ReplayEntry } from "./envelope.js";
import { ResultsFile } from "./results-file.js";
import { ResultsOrder } from "./results-order.js";
import { messageOutcome, resultLine, type ResultLine } from "./results.js";

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

  constructor(
    options: { path?: string | undefined; input: string; compare?: string | undefined },
    private readonly onResults: ((lines: readonly ResultLine[]) => void) | undefined,
    /** Finished results held for an earlier line before the reader waits (ResultsOrder's limit). */
    held?: number,
  ) {
    this.order = new ResultsOrder<ResultLine>(held);
    this.file = options.path !== undefined ? new ResultsFile(options.path, { input: options.input, compare: options.compare }) : undefined;
  }

  /** Before the entry goes to the dispatcher (the sending pass reads in input order). */
  admit(entry: ReplayEntry): void {
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

  finished(entry: ReplayEntry, result: DeliveryResult): void {
    if (result.interrupted) return this.dropped(entry);
    const facts = { type: entry.type ?? "raw", userId: entry.orderKey, messageId: entry.messageId, event: entry.event };
    const responses = result.urls.map((url) => url.response);
    const urls = result.urls.map((url) => ({ ...url, url: withoutUserinfo(url.url) }));
    this.release(this.order.finish(entry.line, resultLine(messageOutcome(entry.line, facts, { delivered: result.delivered, urls }, responses))));
  }

  dropped(entry: ReplayEntry): void {
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

/** A target as a results line shows it: credentials in the URL are never written. */
function withoutUserinfo(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === "" && parsed.password === "") return url;
    parsed.username = "redacted";
    parsed.password = "";
    return parsed.href;
  } catch {
    return url;
  }
}
