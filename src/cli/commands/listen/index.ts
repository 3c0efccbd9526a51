import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../../../errors.js";
import { Inspection } from "../../../inspector/session.js";
import type { Inspected } from "../../../inspector/store.js";
import { FaultPlan } from "../../../receiver/faults.js";
import { createForwarder } from "../../../receiver/forward.js";
import { RecordingFile } from "../../../receiver/record.js";
import { startReceiver, type ReceivedRequest, type Receiver } from "../../../receiver/server.js";
import { countNotReachedCase, requestCase, writeJunitFile, type JunitCase } from "../../../report/junit.js";
import { writeReadyFile } from "../../ready-file.js";
import { seededRandom } from "../../../util/clock.js";
import { formatDuration } from "../../../util/duration.js";
import { redactUrl } from "../../../util/redact.js";
import type { CliIo } from "../../io.js";
import { stripUndefined } from "../../../util/strip-undefined.js";
import { watchKeys } from "./keys.js";
import { onceEach } from "../../once-each.js";
import { createOutput, type Output } from "../../output.js";
import { painter, requestEvent, requestLines, type Painter } from "../../request-lines.js";
import { resolveListenSecret, warnUnsigned } from "../../secret.js";
import type { ListenFlags } from "./options.js";
import { jsonTerminalSafe } from "../../../util/printable.js";

export type ListenOptions = ListenFlags;

type StopReason = "count" | "exit-after" | "signal";

/**
 * The verifying receiver (docs/receiver.md, docs/exit-codes.md#per-command): runs until --count requests,
 * --exit-after or a signal, then prints a summary. 0 when every request was
 * valid, 1 otherwise or when --exit-after came before --count.
 */
export async function listen(options: ListenOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json });
  const secret = resolveListenSecret({ ...options, cwd: io.cwd, env: io.env });
  const tls = readTls(options, io.cwd);
  const forwarder = options.forwardTo !== undefined ? createForwarder(options.forwardTo, { timeoutMs: options.forwardTimeoutMs }) : undefined;
  const recording = options.record !== undefined ? RecordingFile.open(resolve(io.cwd, options.record)) : undefined;
  const stopper = stopSwitch();
  const tally = new Tally(options, io, output, secret);
  const inspection = createInspection(options, io, secret, forwarder?.url, output);
  let receiver: Receiver;
  try {
    receiver = await startReceiver({
      ...stripUndefined({ host: options.host, port: options.port, secret, strict: options.strict, faults: faultPlan(options), tls, recording, forward: forwarder?.forward, maxConnections: options.maxConnections }),
      health: () => tally.health(),
      onError: onceEach((message) => output.warn(`a request could not be handled or recorded: ${message}`)),
      onRequest(received) {
        const request = tally.take(received);
        if (request === undefined) return;
        inspection?.add(request);
        if (tally.countReached) {
          // Refuse anything after the Nth request right away (close is idempotent).
          void receiver.close();
          stopper.stop("count");
        }
      },
    });
  } catch (error) {
    recording?.close();
    await forwarder?.close();
    throw error;
  }
  inspection?.setReceiverUrl(receiver.url);
  const page = inspection && options.ui ? await serveInspector(inspection, options.uiPort, [receiver, forwarder], recording) : undefined;
  const stopKeys = announceReady(options, io, output, { receiver, forwardUrl: forwarder?.url, page, inspection, secret });
  tally.startSpinner();

  const reason = await untilStopped(stopper, options.exitAfterMs, io.signal);
  stopKeys?.();
  await receiver.close();
  await Promise.all([inspection?.close(), forwarder?.close()]);
  recording?.close();
  tally.finish();
  return summarize(options, io, output, tally, reason);
}

/** The fault plan of the flags; `--seed` makes `--fail-rate` repeatable. */
function faultPlan(options: ListenOptions): FaultPlan {
  const { respond, failStatus, delayMs, failFirst, failRate, script } = options;
  const random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  return new FaultPlan(stripUndefined({ respond, failStatus, delayMs, failFirst, failRate, script, random }));
}

/** What listen counts and prints per request: the output lines, the JUnit cases and the spinner. */
class Tally {
  received = 0;
  invalid = 0;
  readonly junitCases: JunitCase[] = [];
  readonly paint: Painter;
  private readonly lines: { push(line: string): void; flush(): void };
  private spinner = { update(_text: string) {}, stop() {} };
  // The spinner only exists on a terminal; skip building its text per request otherwise.
  private readonly spinning: boolean;

  constructor(
    private readonly options: ListenOptions,
    io: CliIo,
    private readonly output: Output,
    readonly secret: string | undefined,
  ) {
    this.paint = painter(output.color);
    this.lines = lineBuffer((text) => (options.json ? io.stdout.write(jsonTerminalSafe(text)) : output.line(text.slice(0, -1))));
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
    this.lines.push(options.json ? `${JSON.stringify({ event: "request", ...requestEvent(request) })}\n` : `${requestLines(request, this.paint, options.verbose)}\n`);
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

/** Says where listen is, then offers the `r` key on a terminal; returns what stops watching the keys. */
function announceReady(
  options: ListenOptions,
  io: CliIo,
  output: Output,
  ready: { receiver: Receiver; forwardUrl: string | undefined; page: string | undefined; inspection: Inspection | undefined; secret: string | undefined },
): (() => void) | undefined {
  const { receiver, inspection } = ready;
  announce(output, receiver, ready.forwardUrl, ready.page);
  if (options.readyFile !== undefined) writeReadyFile(io.cwd, options.readyFile, receiver.url);
  const stopKeys = inspection && io.stdinIsTTY === true ? watchKeys(io.stdin, { r: () => void inspection.resendLatest() }) : undefined;
  if (stopKeys) output.log("Press r to resend the latest request.");
  if (ready.secret === undefined) warnUnsigned(output, "requests are accepted and marked unsigned", { config: false });
  return stopKeys;
}

interface StopSwitch {
  stopped: Promise<StopReason>;
  stop(reason: StopReason): void;
}

function stopSwitch(): StopSwitch {
  let stop: (reason: StopReason) => void = () => {};
  const stopped = new Promise<StopReason>((resolveStop) => (stop = resolveStop));
  return { stopped, stop: (reason) => stop(reason) };
}

/** Waits for --count (through the switch), --exit-after or a signal, whichever comes first. */
async function untilStopped(stopper: StopSwitch, exitAfterMs: number | undefined, signal: AbortSignal): Promise<StopReason> {
  const exitTimer = exitAfterMs !== undefined ? setTimeout(() => stopper.stop("exit-after"), exitAfterMs) : undefined;
  const onSignal = (): void => stopper.stop("signal");
  if (signal.aborted) stopper.stop("signal");
  else signal.addEventListener("abort", onSignal, { once: true });
  try {
    return await stopper.stopped;
  } finally {
    if (exitTimer) clearTimeout(exitTimer);
    signal.removeEventListener("abort", onSignal);
  }
}

/** The summary line and event, the JUnit file; the exit code. */
function summarize(options: ListenOptions, io: CliIo, output: Output, tally: Tally, reason: StopReason): number {
  const { received, invalid, paint } = tally;
  const early = reason === "exit-after" && options.count !== undefined && received < options.count;
  const earlyMessage = `--exit-after ${formatDuration(options.exitAfterMs ?? 0)} came before --count ${options.count ?? 0} requests (${received} received)`;
  if (early) output.warn(earlyMessage);
  const code = invalid > 0 || early ? 1 : 0;
  const valid = received - invalid;
  output.event("summary", { received, valid, invalid, stoppedBy: reason, exitCode: code });
  output.line(
    `Summary: ${received} request${received === 1 ? "" : "s"}, ${paint.ok(`${valid} valid`)}, ${invalid > 0 ? paint.bad(`${invalid} invalid`) : "0 invalid"}`,
  );
  if (options.junit !== undefined) {
    const cases = tally.junitCases;
    // Every reason for a non-zero exit is a failing case: an early --exit-after is one too.
    if (early) cases.push(countNotReachedCase(options.count ?? 0, options.exitAfterMs ?? 0, earlyMessage));
    writeJunitFile(io.cwd, options.junit, { name: "webhook-cli listen", cases, timestamp: new Date(), secret: tally.secret });
  }
  return code;
}

/** Rows are kept only for a page or the `r` key; without either, the hot path stays as it was. */
function createInspection(options: ListenOptions, io: CliIo, secret: string | undefined, forwardUrl: string | undefined, output: Output): Inspection | undefined {
  if (options.ui !== true && io.stdinIsTTY !== true) return undefined;
  // Without the page only the latest request is kept (for `r`); a bound that drops rows is named once.
  const limits = options.ui ? { keep: options.uiKeep, maxBytes: options.uiHistoryMb * 1024 * 1024 } : { keep: 0 };
  return new Inspection({ secret, forwardUrl, ...limits, onResent: (row) => reportResend(row, output), onDropped: (notice) => output.warn(`inspector: ${notice.message}; the page shows the newest (a --record file keeps every request)`) });
}

/** `Listening on` first (docs/cli.md#output-streams), then where requests are relayed and where the page is. */
function announce(output: Output, receiver: Receiver, forwardUrl: string | undefined, page: string | undefined): void {
  if (output.json) {
    output.event("listening", { url: receiver.url, port: receiver.port, ...(page ? { inspector: page } : {}), ...(forwardUrl ? { forwardTo: forwardUrl } : {}) });
    output.log(`Listening on ${receiver.url}`);
  } else output.line(`Listening on ${receiver.url}`);
  if (forwardUrl) output.line(`Forwarding to ${forwardUrl}`);
  if (page) output.line(`Inspector: ${page}`);
}

/** Starts the page; when its port is unusable, what listen opened is closed before the error is reported. */
async function serveInspector(
  inspection: Inspection,
  port: number,
  opened: readonly ({ close(): Promise<void> } | undefined)[],
  recording: RecordingFile | undefined,
): Promise<string> {
  try {
    return await inspection.serve(port);
  } catch (error) {
    await Promise.all(opened.map((item) => item?.close()));
    recording?.close();
    throw error;
  }
}

/** `↻ R1 resend of #3 → http://localhost:3000/webhook  200  12ms` (or a `resend` JSON event). */
function reportResend(row: Inspected, output: Output): void {
  const response = row.response;
  const fields = { label: row.label, of: row.resend?.ofLabel, url: row.resend?.url, status: response?.status ?? null, ms: response?.ms ?? 0, error: response?.error ?? null };
  output.event("resend", fields);
  const outcome = fields.status !== null && fields.error === null ? String(fields.status) : `${fields.status ?? "no answer"}: ${fields.error ?? ""}`;
  output.line(`↻ ${fields.label} resend of #${fields.of ?? "?"} → ${fields.url ?? ""}  ${outcome}  ${formatDuration(fields.ms)}`);
}

function readTls(options: ListenOptions, cwd: string): { cert: Buffer; key: Buffer } | undefined {
  if (options.tlsCert === undefined && options.tlsKey === undefined) return undefined;
  if (options.tlsCert === undefined) throw new UsageError("--tls-key needs --tls-cert", { flag: "--tls-cert" });
  if (options.tlsKey === undefined) throw new UsageError("--tls-cert needs --tls-key", { flag: "--tls-key" });
  const read = (file: string, flag: string): Buffer => {
    try {
      return readFileSync(resolve(cwd, file));
    } catch (error) {
      throw new UsageError(`cannot read: ${(error as Error).message}`, { flag, file });
    }
  };
  return { cert: read(options.tlsCert, "--tls-cert"), key: read(options.tlsKey, "--tls-key") };
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
