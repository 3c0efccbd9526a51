import type { AttemptEvent } from "../../delivery/types.js";
import type { DispatchProgress } from "../../dispatch/dispatcher.js";
import { formatDuration } from "../../util/duration.js";
import type { Output, Spinner } from "./output.js";

/** How often a status line is printed where no spinner can be drawn (CI logs). */
const STATUS_INTERVAL_MS = 10_000;
// How often a spinner's counts are refreshed on a terminal.
const SPINNER_REFRESH_MS = 250;

/** `12 sent, 10 delivered, 1 retrying, 1 failed, 3.2/s, oldest pending: next attempt in 4.0s`. */
function statusText(p: DispatchProgress, elapsedMs: number, now: number): string {
  const rate = elapsedMs > 0 ? (p.sent * 1000) / elapsedMs : 0;
  const pending = p.oldestNextAttemptAt !== undefined ? `, oldest pending: next attempt in ${formatDuration(Math.max(0, p.oldestNextAttemptAt - now))}` : "";
  const skipped = p.skipped > 0 ? `, ${p.skipped} skipped` : "";
  return `${p.sent} sent, ${p.delivered} delivered${skipped}, ${p.retrying} retrying, ${p.failed} failed, ${rate.toFixed(1)}/s${pending}`;
}

/**
 * Progress of a sending command (never a silent hang): live counts in the
 * spinner on a terminal; elsewhere a status line on stderr every `intervalMs`, and a
 * last one at the end.
 */
export class StatusLine {
  private readonly started = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private spinner: Spinner | undefined;

  constructor(
    private readonly output: Output,
    private readonly label: string,
    private readonly progress: () => DispatchProgress,
    private readonly intervalMs = STATUS_INTERVAL_MS,
  ) {}

  start(): void {
    if (this.output.spins) {
      this.spinner = this.output.spinner(`${this.label}…`);
      this.timer = setInterval(() => this.spinner?.update(`${this.label}: ${this.text()}`), SPINNER_REFRESH_MS);
    } else {
      this.timer = setInterval(() => this.print(), this.intervalMs);
    }
    // A status line alone must not keep a finished command alive.
    this.timer.unref();
  }

  /** Stops the updates; without a spinner, prints the last status line. */
  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.spinner) this.spinner.stop();
    else this.print();
    this.spinner = undefined;
  }

  private print(): void {
    this.output.log(`${this.label}: ${this.text()}`);
  }

  private text(): string {
    const now = Date.now();
    return statusText(this.progress(), now - this.started, now);
  }
}

/**
 * With the 4 h default window a failing receiver keeps a CI job waiting for hours: the first
 * retry says so, once, and names the flag.
 */
export function retryWindowNotice(output: Output, windowIsDefault: boolean): (event: AttemptEvent) => void {
  let told = !windowIsDefault;
  return (event) => {
    if (told || event.retryInMs === undefined) return;
    told = true;
    output.log("note: failed messages are retried for up to 4h (the default); --retry-window 30s (or 0, no retries) gives up sooner");
  };
}
