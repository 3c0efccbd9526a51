import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { ChalkInstance } from "chalk";
import { UsageError } from "../../errors.js";
import { Inspection } from "../../inspector/session.js";
import type { Inspected } from "../../inspector/store.js";
import { FaultPlan } from "../../receiver/faults.js";
import { createForwarder, type ForwardResult } from "../../receiver/forward.js";
import { RecordingFile } from "../../receiver/record.js";
import { startReceiver, type ReceivedRequest, type Receiver } from "../../receiver/server.js";
import type { JunitCase } from "../../report/junit.js";
import { writeJunitFile } from "../junit-file.js";
import { writeReadyFile } from "../ready-file.js";
import { seededRandom } from "../../util/clock.js";
import { formatDuration } from "../../util/duration.js";
import { redactUrl } from "../../util/redact.js";
import type { CliIo } from "../io.js";
import { stripUndefined } from "../options.js";
import { watchKeys } from "../keys.js";
import { createOutput, type Output } from "../output.js";
import { resolveListenSecret, warnUnsigned } from "../secret.js";
import type { ListenFlags } from "../options/listen.js";

export type ListenOptions = ListenFlags;

type StopReason = "count" | "exit-after" | "signal";

/**
 * The verifying receiver (CONTRACT.md 3): runs until --count requests,
 * --exit-after or a signal, then prints a summary. 0 when every request was
 * valid, 1 otherwise or when --exit-after came before --count.
 */
export async function listen(options: ListenOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json });
  const secret = resolveListenSecret({ ...options, cwd: io.cwd, env: io.env });
  const tls = readTls(options, io.cwd);
  const forwarder = options.forwardTo !== undefined ? createForwarder(options.forwardTo, { timeoutMs: options.forwardTimeoutMs }) : undefined;
  const recording = options.record !== undefined ? RecordingFile.open(resolve(io.cwd, options.record)) : undefined;
  const { respond, failStatus, delayMs, failFirst, failRate, script } = options;
  const random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  const faults = new FaultPlan(stripUndefined({ respond, failStatus, delayMs, failFirst, failRate, script, random }));

  const paint = painter(output.color);
  const lines = lineBuffer((text) => (options.json ? io.stdout.write(text) : output.line(text.slice(0, -1))));
  const junitCases: JunitCase[] = [];
  let received = 0;
  let invalid = 0;
  let stop: (reason: StopReason) => void = () => {};
  const stopped = new Promise<StopReason>((resolveStop) => (stop = resolveStop));
  let spinner = { update(_text: string) {}, stop() {} };
  // The spinner only exists on a terminal; skip building its text per request otherwise.
  const spinning = io.stderrIsTTY;
  const inspection = createInspection(options, io, secret, forwarder?.url, output);

  let receiver: Receiver;
  let lastError = "";
  try {
    receiver = await startReceiver({
      ...stripUndefined({ host: options.host, port: options.port, secret, strict: options.strict, faults, tls, recording, forward: forwarder?.forward, maxConnections: options.maxConnections }),
      health: () => ({ ok: true, received, valid: received - invalid, invalid }),
      onError(error) {
        // A full disk fails every request: say it once per distinct problem.
        if (error.message === lastError) return;
        lastError = error.message;
        output.warn(`a request could not be handled or recorded: ${error.message}`);
      },
      onRequest(received_) {
        if (options.count !== undefined && received >= options.count) return;
        // Credential-like query values and the secret never reach the terminal, the reports or the inspector.
        const path = redactUrl(received_.path, secret);
        const request = path === received_.path ? received_ : { ...received_, path };
        inspection?.add(request);
        received += 1;
        if (!request.verdict.valid) invalid += 1;
        lines.push(options.json ? `${JSON.stringify({ event: "request", ...requestEvent(request) })}\n` : `${requestLines(request, paint, options.verbose)}\n`);
        if (options.junit !== undefined) junitCases.push(junitCase(request));
        if (spinning) spinner.update(waitingText(received, invalid));
        if (options.count !== undefined && received >= options.count) {
          // Refuse anything after the Nth request right away (close is idempotent).
          void receiver.close();
          stop("count");
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

  announce(output, receiver, forwarder?.url, page);
  if (options.readyFile !== undefined) writeReadyFile(io.cwd, options.readyFile, receiver.url);
  const stopKeys = inspection && isTerminal(io.stdin) ? watchKeys(io.stdin, { r: () => void inspection.resendLatest() }) : undefined;
  if (stopKeys) output.log("Press r to resend the latest request.");
  if (secret === undefined) warnUnsigned(output, "requests are accepted and marked unsigned", { config: false });
  spinner = output.spinner(waitingText(0, 0));

  const exitTimer = options.exitAfterMs !== undefined ? setTimeout(() => stop("exit-after"), options.exitAfterMs) : undefined;
  const onSignal = (): void => stop("signal");
  if (io.signal.aborted) stop("signal");
  else io.signal.addEventListener("abort", onSignal, { once: true });

  const reason = await stopped;
  if (exitTimer) clearTimeout(exitTimer);
  io.signal.removeEventListener("abort", onSignal);
  stopKeys?.();
  await receiver.close();
  await Promise.all([inspection?.close(), forwarder?.close()]);
  recording?.close();
  lines.flush();
  spinner.stop();

  const early = reason === "exit-after" && options.count !== undefined && received < options.count;
  if (early) output.warn(`--exit-after ${formatDuration(options.exitAfterMs ?? 0)} came before --count ${options.count ?? 0} requests (${received} received)`);
  const code = invalid > 0 || early ? 1 : 0;
  const valid = received - invalid;
  output.event("summary", { received, valid, invalid, stoppedBy: reason, exitCode: code });
  output.line(
    `Summary: ${received} request${received === 1 ? "" : "s"}, ${paint.ok(`${valid} valid`)}, ${invalid > 0 ? paint.bad(`${invalid} invalid`) : "0 invalid"}`,
  );
  if (options.junit !== undefined) {
    // Every reason for a non-zero exit is a failing case: an early --exit-after is one too.
    if (early) junitCases.push(countNotReachedCase(options.count ?? 0, received, options.exitAfterMs ?? 0));
    writeJunitFile(io.cwd, options.junit, { name: "webhook-cli listen", cases: junitCases, timestamp: new Date() });
  }
  return code;
}

/** Rows are kept only for a page or the `r` key; without either, the hot path stays as it was. */
function createInspection(options: ListenOptions, io: CliIo, secret: string | undefined, forwardUrl: string | undefined, output: Output): Inspection | undefined {
  if (options.ui !== true && !isTerminal(io.stdin)) return undefined;
  return new Inspection({ secret, forwardUrl, keep: options.ui ? options.uiKeep : 1, onResent: (row) => reportResend(row, output) });
}

/** `Listening on` first (CONTRACT.md 3), then where requests are relayed and where the page is. */
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

function isTerminal(stream: NodeJS.ReadableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
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

function countNotReachedCase(count: number, received: number, exitAfterMs: number): JunitCase {
  const message = `--exit-after ${formatDuration(exitAfterMs)} came before --count ${count} requests (${received} received)`;
  return { name: `--count ${count} requests`, classname: "webhook-cli.listen", time: exitAfterMs / 1000, failure: { message, type: "count" } };
}

function junitCase(request: ReceivedRequest): JunitCase {
  const reasons = invalidReasons(request);
  const test: JunitCase = {
    name: `#${request.index} ${request.verdict.type ?? "unknown"} ${request.method} ${request.path}`,
    classname: "webhook-cli.listen",
    time: 0,
  };
  if (reasons.length > 0) {
    test.failure = {
      message: reasons[0] ?? "invalid",
      type: request.verdict.signatureValid === false ? "signature" : "shape",
      details: reasons.join("\n"),
    };
  }
  return test;
}

function waitingText(received: number, invalid: number): string {
  return received === 0 ? "Waiting for requests…" : `${received} received (${invalid} invalid), waiting…`;
}

/**
 * Collects output lines and writes them every few milliseconds: under load one
 * write per request would cost more than the request itself, and 25 ms is not
 * noticeable on a terminal.
 */
export function lineBuffer(write: (text: string) => void, intervalMs = 25): { push(line: string): void; flush(): void } {
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

/** Colour functions that are identity when colour is off (no chalk on the hot path). */
export interface Painter {
  ok(text: string): string;
  bad(text: string): string;
  dim(text: string): string;
  warn(text: string): string;
}

const plain = (text: string): string => text;

export function painter(color: ChalkInstance): Painter {
  if (color.level === 0) return { ok: plain, bad: plain, dim: plain, warn: plain };
  return { ok: (t) => color.green(t), bad: (t) => color.red(t), dim: (t) => color.dim(t), warn: (t) => color.yellow(t) };
}
/** `#3 POST /hooks  track  user_1  "Order Completed"  signature ok  482 B  → 200`, then indented problems. */
export function requestLines(request: ReceivedRequest, paint: Painter, verbose: boolean): string {
  const v = request.verdict;
  const signature =
    v.signatureValid === true ? paint.ok("signature ok") : v.signatureValid === null ? paint.dim("unsigned") : paint.bad("signature FAILED");
  const answer = request.forwarded
    ? forwardedAnswer(request.forwarded, paint)
    : request.fault === "timeout"
      ? "held (timeout)"
      : request.fault === "drop"
        ? "dropped"
        : `${request.status ?? ""}${request.injected ? " (injected)" : ""}`;
  let text =
    `#${request.index} ${request.method} ${request.path}  ${v.type ?? paint.bad("?")}  ${v.userId ?? "-"}` +
    `${v.name !== undefined ? `  ${JSON.stringify(v.name)}` : ""}  ${signature}  ${formatSize(v.size)}  → ${answer}`;
  if (!verbose && v.shapeWarnings.length > 0) text += paint.dim(`  (+${v.shapeWarnings.length} unknown key${v.shapeWarnings.length === 1 ? "" : "s"})`);
  if (v.signatureValid === false) {
    text += `\n    ${paint.bad("signature:")} ${v.signatureError ?? ""}`;
    if (v.diagnosis) text += `\n    ${paint.warn("likely cause:")} ${v.diagnosis.message}`;
  }
  for (const error of v.shapeErrors) text += `\n    ${paint.bad("shape:")} ${error.message}`;
  if (verbose) {
    for (const warning of v.shapeWarnings) text += `\n    ${paint.warn("warning:")} ${warning.message}`;
    const body = v.body !== undefined ? JSON.stringify(v.body, null, 2) : v.text ?? "(not UTF-8)";
    text += `\n${body.replace(/^/gm, "    ")}`;
  }
  return text;
}

/** The `request` JSON event's fields (CONTRACT.md 3), plus `diagnosis` when a signature failed. */
/** `201 from the app in 12ms`, or listen's own 502/504 with the reason. */
function forwardedAnswer(result: ForwardResult, paint: Painter): string {
  if (result.fromApp) return `${result.status} from the app in ${formatDuration(result.ms)}`;
  return paint.bad(`${result.status}: ${result.error ?? "no answer from the app"}`);
}

export function requestEvent(request: ReceivedRequest): Record<string, unknown> {
  const v = request.verdict;
  const fields: Record<string, unknown> = {
    method: request.method,
    path: request.path,
    type: v.type ?? null,
    userId: v.userId ?? null,
    signatureValid: v.signatureValid,
    shapeErrors: v.shapeErrors,
    status: request.status,
  };
  if (request.fault !== null) fields["fault"] = request.fault;
  if (request.forwarded) {
    const { fromApp, status, ms, error } = request.forwarded;
    fields["app"] = { status: fromApp ? status : null, ms, error };
  }
  if (v.signatureValid === false) fields["diagnosis"] = v.diagnosis?.message ?? v.signatureError;
  return fields;
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Why a request counts as invalid, one reason per problem (for JUnit and summaries). */
export function invalidReasons(request: ReceivedRequest): string[] {
  const v = request.verdict;
  const reasons: string[] = [];
  if (v.signatureValid === false) reasons.push(`signature: ${v.signatureError ?? "invalid"}${v.diagnosis ? ` (likely cause: ${v.diagnosis.message})` : ""}`);
  for (const error of v.shapeErrors) reasons.push(`shape: ${error.message}`);
  return reasons;
}
