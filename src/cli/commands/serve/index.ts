import { resolve } from "node:path";
import type { DeliveryResult } from "../../../delivery/types.js";
import { DEFAULT_DELIVERY_CONCURRENCY } from "../../../dispatch/dispatcher.js";
import { Collector, type CollectorCounts, type CollectorOptions } from "../../../serve/collector.js";
import { DEFAULT_SOURCE } from "../../../serve/ingest.js";
import { openSqliteQueue } from "../../../serve/queue/durable-queue.js";
import { MemoryQueue } from "../../../serve/queue/memory-queue.js";
import type { MessageQueue, QueuedMessage } from "../../../serve/queue/message-queue.js";
import { listenCollector, type ServeServer } from "../../../serve/server.js";
import { userIdOf } from "../../../messages/check.js";
import { resolveDeliveryOptions, warnIfUnsigned } from "../../shared/delivery-options.js";
import type { CliIo } from "../../terminal/io.js";
import { onceEach } from "../../shared/once-each.js";
import type { ServeFlags } from "./options.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { writeReadyFile } from "../../shared/ready-file.js";
import { printable } from "../../../safe-text/printable.js";
import { formatDuration } from "../../../util/duration.js";
import type { TargetChange } from "../../../serve/target-health.js";
import { UsageError } from "../../../errors.js";
import { allowedOrigins, type AllowedOrigins } from "../../../serve/cors.js";
import { readTlsFiles } from "../../shared/tls-files.js";
import { functionEngineOptions, runSignal } from "../../shared/functions.js";
import {
  type GivenSourceFunctions,
  openServeFunctions,
  type ServeFunctions,
  showFunctionAttempt,
  showSourceInvocation,
  sourceFunctionFlags,
  splitSettings,
} from "./functions.js";

export type ServeOptions = ServeFlags;

/**
 * Runs the collection service stand-in until SIGINT/SIGTERM (the normal stop):
 * then a summary, and 0, or 1 when a message was given up during the run.
 */
export async function serve(options: ServeOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  const { settings, engineOptions, sources } = serveSettings(options, io);
  output.maskSecret(settings.secrets);
  const stateDir = resolve(io.cwd, options.state);
  const tls = readTlsFiles(options, io.cwd);
  const origins = originsOf(options.allowOrigin ?? []);

  if (options.failed) return printFailed(await openSqliteQueue(stateDir), output);

  const functions = await openServeFunctions(options, settings, io.cwd, sources);
  const onStorageError = onceEach((message) => output.warn(`cannot write to the state database (kept in memory, retried): ${message}`));
  let collector: Collector | undefined;
  let server: ServeServer;
  try {
    const queue: MessageQueue = options.memory ? new MemoryQueue() : await openSqliteQueue(stateDir, { onStorageError });
    collector = createCollector(options, output, { settings: functions.destination?.settings ?? settings, queue, delivery: engineOptions }, functions);
    server = await listenCollector(collector, {
      host: options.host,
      port: options.port,
      tls,
      allowedOrigins: origins,
      maxConnections: options.maxConnections,
    });
  } catch (error) {
    await collector?.close();
    await functions.close();
    throw error;
  }
  announce(options, io, output, server.url, server.port);
  warnAboutSetup(options, output, settings, functions.sources.length);
  return runUntilStopped({ output, collector, server, stateDir, memory: options.memory === true }, runSignal(io.signal, functions.destination), functions);
}

/** serve's settings: the delivery flags and the config; its source functions, and `--settings` sorted between its functions. */
function serveSettings(options: ServeOptions, io: CliIo): ReturnType<typeof resolveDeliveryOptions> & { sources: GivenSourceFunctions } {
  const given = sourceFunctionFlags(options.sourceFunctions ?? []);
  const split = splitSettings(options.settings ?? [], new Set(given.map(({ name }) => name)));
  if (split.unnamed !== undefined && options.function === undefined && given.length === 0) {
    throw new UsageError("--settings goes with --function or --source-function", { flag: "--settings" });
  }
  // --function-egress may serve the source functions alone: checked where they load.
  const flags = { ...options, settings: options.function !== undefined ? split.unnamed : undefined, egress: undefined };
  const { settings: resolved, engineOptions } = resolveDeliveryOptions(flags, io, { aliasKeys: options.aliasKeys });
  const settings =
    options.writeKey !== undefined ? { ...resolved, sources: [...resolved.sources, { name: DEFAULT_SOURCE, writeKey: options.writeKey }] } : resolved;
  return { settings, engineOptions, sources: { given, split } };
}

/** Until SIGINT/SIGTERM (or a function's setup problem): the counts; then the summary, and the exit status. */
async function runUntilStopped(
  run: { output: Output; collector: Collector; server: ServeServer; stateDir: string; memory: boolean },
  stop: AbortSignal,
  functions: ServeFunctions,
): Promise<number> {
  const { output, collector, stateDir } = run;
  const waiting = collector.counts().pending;
  if (waiting > 0) output.log(`resuming ${waiting} message${waiting === 1 ? "" : "s"} stored by a previous run (${stateDir})`);
  collector.start();
  await showCountsUntilAborted(output, collector, stop);
  await run.server.close();
  await collector.close();
  await functions.close();
  const counts = collector.counts();
  output.event("summary", { ...counts });
  output.line(`Summary: ${countsText(counts)}`);
  if (counts.pending > 0 && !run.memory) output.log(`${counts.pending} message${counts.pending === 1 ? "" : "s"} kept in ${stateDir} for the next run`);
  // A package a destination function needs is not installed: serve stopped there, its messages kept (exit 2).
  const setup = functions.destination?.setupError();
  if (setup !== undefined) throw setup;
  return counts.failed > 0 ? 1 : 0;
}

function originsOf(values: readonly string[]): AllowedOrigins {
  const result = allowedOrigins(values);
  if (!result.ok) throw new UsageError(result.error, { flag: "--allow-origin" });
  return result.allowed;
}

function createCollector(
  options: ServeOptions,
  output: Output,
  parts: Pick<CollectorOptions, "settings" | "queue" | "delivery">,
  functions: ServeFunctions,
): Collector {
  return new Collector({
    ...parts,
    ...(functions.destination ? { ...functionEngineOptions(functions.destination), onFunctionAttempt: (event) => showFunctionAttempt(output, event) } : {}),
    sourceFunctions: functions.sources,
    onSourceInvocation: (invocation) => showSourceInvocation(output, invocation),
    concurrency: options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY,
    onSettled: (message, result) => {
      if (!result.delivered && !result.skipped) reportFailure(output, message, result);
    },
    onTargetChange: (change) => reportTargetChange(output, change),
    strict: options.strict ?? false,
    onRejected: (rejection) => {
      output.event("rejected", { index: rejection.index, reason: rejection.reason, source: rejection.source, path: rejection.path });
      output.log(`${output.color.yellow("!")} rejected ${printable(rejection.where)} (${printable(rejection.source)}): ${printable(rejection.reason)}`);
    },
    onUnauthorized: (refusal) => {
      output.event("unauthorized", { path: refusal.path, client: refusal.client, reason: refusal.message });
      output.log(`${output.color.red("✗")} 401 ${printable(refusal.path)} from ${printable(refusal.client)}: ${printable(refusal.message)}`);
    },
  });
}

function announce(options: ServeOptions, io: CliIo, output: Output, url: string, port: number): void {
  // Written first: whoever has read `Listening on` can read the file too (as listen does).
  if (options.readyFile !== undefined) writeReadyFile(io.cwd, options.readyFile, url);
  if (options.json) {
    output.event("listening", { url, port });
    output.log(`Listening on ${url}`);
  } else output.line(`Listening on ${url}`);
}

/** What the settings leave out that a user may not expect: signing, sources, targets, the switch, durability. */
function warnAboutSetup(options: ServeOptions, output: Output, settings: CollectorOptions["settings"], sourceFunctions: number): void {
  warnIfUnsigned(output, settings);
  if (settings.sources.length === 0 && sourceFunctions === 0) output.warn('no source configured (--write-key or config "sources"): any write key is accepted');
  if (settings.targets.length === 0)
    output.warn('no webhook URL (--url, --function or config "webhooks"): messages are stored and wait for a run that has one');
  if (!settings.enabled) output.warn('the destination is switched off in the config ("enabled": false): calls are accepted and counted, nothing is forwarded');
  if (options.memory) output.warn("--memory: the queue is not durable; messages not yet delivered are lost when serve stops");
}

/** The counts on the spinner, refreshed twice a second, until SIGINT/SIGTERM. */
async function showCountsUntilAborted(output: Output, collector: Collector, signal: AbortSignal): Promise<void> {
  const spinner = output.spinner(countsText(collector.counts()));
  const ticker = setInterval(() => spinner.update(countsText(collector.counts())), 500);
  await new Promise<void>((resolveStop) => {
    if (signal.aborted) resolveStop();
    else signal.addEventListener("abort", () => resolveStop(), { once: true });
  });
  clearInterval(ticker);
  spinner.stop();
}

function countsText(counts: CollectorCounts): string {
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : "";
  const objects = counts.objects > 0 ? `, ${counts.objects} objects` : "";
  return `${counts.accepted} accepted, ${counts.rejected} rejected, ${counts.filtered} filtered, ${counts.delivered} delivered${skipped}, ${counts.retrying} retrying, ${counts.failed} failed, ${counts.pending} pending${objects}`;
}

function describe(body: string): { type: string | null; userId: string | null } {
  try {
    const message = JSON.parse(body) as Record<string, unknown>;
    return { type: typeof message["type"] === "string" ? message["type"] : null, userId: userIdOf(message) ?? null };
  } catch {
    return { type: null, userId: null };
  }
}

function reportFailure(output: Output, message: QueuedMessage, result: DeliveryResult): void {
  const { type, userId } = describe(message.body);
  output.event("delivery", { id: message.id, type, userId, delivered: false, urls: result.urls });
  const reasons = result.urls.map(
    (url) => `${url.url} ${url.status ?? "---"} after ${url.attempts} attempt${url.attempts === 1 ? "" : "s"}${url.error ? `: ${url.error}` : ""}`,
  );
  output.log(
    `${output.color.red("✗")} gave up on ${type ?? "message"}${userId !== null ? ` ${printable(userId)}` : ""} (#${message.id}): ${printable(reasons.join("; "))}`,
  );
}

/** Deliveries to a URL started failing or recovered: one line each, at most every 30 s per URL (docs/serve-api.md#output). */
function reportTargetChange(output: Output, change: TargetChange): void {
  output.event("target", { ...change });
  if (change.state === "failing") output.log(`${output.color.yellow("!")} deliveries to ${change.url} are failing: ${printable(change.error)} (retrying)`);
  else {
    const attempts = `${change.failedAttempts} failed attempt${change.failedAttempts === 1 ? "" : "s"}`;
    output.log(`${output.color.green("✓")} deliveries to ${change.url} recovered after ${formatDuration(change.downMs)} (${attempts})`);
  }
}

/** `serve --failed`: the messages given up, one JSON line each (body, failure, failedAt). */
function printFailed(queue: MessageQueue, output: Output): number {
  try {
    const failed = queue.listFailed();
    for (const record of failed) {
      const line = JSON.stringify({ failedAt: new Date(record.failedAt).toISOString(), body: JSON.parse(record.body) as unknown, failure: record.failure });
      if (output.json) output.event("failed", JSON.parse(line) as Record<string, unknown>);
      else output.line(line);
    }
    output.log(`${failed.length} failed message${failed.length === 1 ? "" : "s"}`);
    return 0;
  } finally {
    queue.close();
  }
}
