import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { ChalkInstance } from "chalk";
import { UsageError } from "../../errors.js";
import { FaultPlan } from "../../receiver/faults.js";
import { RecordingFile } from "../../receiver/record.js";
import { startReceiver, type ReceivedRequest, type Receiver } from "../../receiver/server.js";
import { junitXml, type JunitCase } from "../../report/junit.js";
import { seededRandom } from "../../util/clock.js";
import { formatDuration } from "../../util/duration.js";
import type { CliIo } from "../io.js";
import { stripUndefined } from "../options.js";
import { createOutput } from "../output.js";
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

  let receiver: Receiver;
  try {
    receiver = await startReceiver({
      ...stripUndefined({ host: options.host, port: options.port, secret, strict: options.strict, faults, tls, recording }),
      onRequest(request) {
        if (options.count !== undefined && received >= options.count) return;
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
    throw error;
  }

  if (options.json) {
    output.event("listening", { url: receiver.url, port: receiver.port });
    output.log(`Listening on ${receiver.url}`);
  } else output.line(`Listening on ${receiver.url}`);
  if (secret === undefined) warnUnsigned(output, "requests are accepted and marked unsigned", { config: false });
  spinner = output.spinner(waitingText(0, 0));

  const exitTimer = options.exitAfterMs !== undefined ? setTimeout(() => stop("exit-after"), options.exitAfterMs) : undefined;
  const onSignal = (): void => stop("signal");
  if (io.signal.aborted) stop("signal");
  else io.signal.addEventListener("abort", onSignal, { once: true });

  const reason = await stopped;
  if (exitTimer) clearTimeout(exitTimer);
  io.signal.removeEventListener("abort", onSignal);
  await receiver.close();
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
  if (options.junit !== undefined) writeJunit(resolve(io.cwd, options.junit), junitCases);
  return code;
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

function writeJunit(path: string, cases: JunitCase[]): void {
  try {
    writeFileSync(path, junitXml({ name: "webhook-cli listen", cases, timestamp: new Date() }));
  } catch (error) {
    throw new UsageError(`cannot write: ${(error as Error).message}`, { flag: "--junit", file: path });
  }
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
  const answer =
    request.fault === "timeout" ? "held (timeout)" : request.fault === "drop" ? "dropped" : `${request.status ?? ""}${request.injected ? " (injected)" : ""}`;
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
