import { requestCase, type JunitCase } from "../../../report/junit.js";
import type { ReceivedRequest } from "../../../receiver/received-request.js";
import { jsonTerminalSafe } from "../../../safe-text/printable.js";
import { redactUrl } from "../../../safe-text/redact.js";
import type { CliIo } from "../../terminal/io.js";
import type { Output } from "../../terminal/output.js";
import { painter, RequestLineMaker, requestEvent, type Painter } from "../../terminal/request-lines.js";
import type { ListenFlags } from "./options.js";

/** What listen counts and prints per request: the output lines, the JUnit cases and the spinner. */
export class Tally {
  received = 0;
  invalid = 0;
  readonly junitCases: JunitCase[] = [];
  readonly paint: Painter;
  private readonly lines: { push(line: string): void; flush(): void };
  private readonly lineMaker: RequestLineMaker;
  private spinner = { update(_text: string) {}, stop() {} };
  // The spinner only exists on a terminal; skip building its text per request otherwise.
  private readonly spinning: boolean;

  constructor(
    private readonly options: ListenFlags,
    io: CliIo,
    private readonly output: Output,
    readonly secret: readonly string[],
  ) {
    this.paint = painter(output.color);
    this.lineMaker = new RequestLineMaker(this.paint, options.verbose, secret.length);
    this.lines = lineBuffer((text) => (options.json ? io.stdout.write(jsonTerminalSafe(text)) : output.lines(text)));
    this.spinning = io.stderrIsTTY;
  }

  get countReached(): boolean {
    return this.options.count !== undefined && this.received >= this.options.count;
  }

  health(): Record<string, unknown> {
    return { ok: true, received: this.received, valid: this.received - this.invalid, invalid: this.invalid };
  }

  /** Counts and prints one request, redacted; undefined once --count requests were taken. */
  take(received: ReceivedRequest): ReceivedRequest | undefined {
    if (this.countReached) return undefined;
    // Credential-like query values and the secret never reach the terminal, the reports or the inspector.
    const path = redactUrl(received.path, this.secret);
    const request = path === received.path ? received : { ...received, path };
    this.received += 1;
    if (!request.verdict.valid) this.invalid += 1;
    const options = this.options;
    this.lines.push(options.json ? `${JSON.stringify({ event: "request", ...requestEvent(request) })}\n` : `${this.lineMaker.lines(request)}\n`);
    if (options.junit !== undefined) this.junitCases.push(requestCase(request));
    if (this.spinning) this.spinner.update(waitingText(this.received, this.invalid));
    return request;
  }

  startSpinner(): void {
    this.spinner = this.output.spinner(waitingText(0, 0));
  }

  finish(): void {
    this.lines.flush();
    this.spinner.stop();
  }
}

function waitingText(received: number, invalid: number): string {
  return received === 0 ? "Waiting for requests…" : `${received} received (${invalid} invalid), waiting…`;
}

/**
 * Collects output lines and writes them every few milliseconds: under load one
 * write per request would cost more than the request itself, and 25 ms is not
 * noticeable on a terminal.
 */
function lineBuffer(write: (text: string) => void, intervalMs = 25): { push(line: string): void; flush(): void } {
  let pending = "";
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending === "") return;
    const text = pending;
    pending = "";
    write(text);
  };
  return {
    push(line) {
      pending += line;
      if (pending.length > 64 * 1024) flush();
      else timer ??= setTimeout(flush, intervalMs);
    },
    flush,
  };
}
