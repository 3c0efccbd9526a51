import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import type { DeliveryResult } from "../../delivery/types.js";
import { DEFAULT_DELIVERY_CONCURRENCY } from "../../dispatch/dispatcher.js";
import { Collector, type CollectorCounts } from "../../service/collector.js";
import { DEFAULT_SOURCE } from "../../service/ingest.js";
import { MemoryQueue, openSqliteQueue, type MessageQueue, type QueuedMessage } from "../../service/queue.js";
import { listenCollector } from "../../service/server.js";
import { userIdOf } from "../../messages/check.js";
import type { AliasKeys } from "../../messages/schemas.js";
import { addDeliveryOptions, deliveryOptionsShape, resolveDeliveryOptions, withDeliveryFlags, type DeliveryFlags } from "../delivery-options.js";
import type { CliIo, CommandContext } from "../io.js";
import { aliasKeys, integer, parseOptions, stripUndefined } from "../options.js";
import { createOutput, type Output } from "../output.js";
import { writeReadyFile } from "../ready-file.js";

export const DEFAULT_SERVE_PORT = 8088;
export const DEFAULT_STATE_DIR = ".webhook-cli";

export interface ServeOptions extends DeliveryFlags {
  port: number;
  host: string;
  /** One source's write key (besides the config's `sources`). */
  writeKey?: string;
  /** Directory of the durable queue. */
  state: string;
  /** Keep the queue in memory: nothing survives a restart (measures durability's cost). */
  memory?: boolean;
  /** Print the messages given up (the failed table of --state) and exit. */
  failed?: boolean;
  aliasKeys?: AliasKeys;
  concurrency?: number;
  /** One invalid call refuses the whole request with 400 (the CI mode); otherwise invalid calls are dropped one by one. */
  strict?: boolean;
  /** Write the URL here (atomically) once listening, for CI scripts to wait on. */
  readyFile?: string;
  json?: boolean;
}

/**
 * Runs the collection service stand-in until SIGINT/SIGTERM (the normal stop):
 * then a summary, and 0, or 1 when a message was given up during the run.
 */
export async function serve(options: ServeOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  const { settings: resolved, engineOptions } = resolveDeliveryOptions(options, io, options.aliasKeys !== undefined ? { aliasKeys: options.aliasKeys } : {});
  const settings =
    options.writeKey !== undefined ? { ...resolved, sources: [...resolved.sources, { name: DEFAULT_SOURCE, writeKey: options.writeKey }] } : resolved;
  const stateDir = resolve(io.cwd, options.state);

  if (options.failed) return printFailed(await openSqliteQueue(stateDir), output);

  const queue: MessageQueue = options.memory ? new MemoryQueue() : await openSqliteQueue(stateDir);
  const collector = new Collector({
    settings,
    queue,
    concurrency: options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY,
    delivery: engineOptions,
    onSettled: (message, result) => {
      if (!result.delivered) reportFailure(output, message, result);
    },
    strict: options.strict ?? false,
    onRejected: (rejection) => {
      output.event("rejected", { index: rejection.index, reason: rejection.reason, source: rejection.source, path: rejection.path });
      output.log(`${output.color.yellow("!")} rejected ${rejection.where} (${rejection.source}): ${rejection.reason}`);
    },
  });

  let server;
  try {
    server = await listenCollector(collector, { host: options.host, port: options.port });
  } catch (error) {
    await collector.close();
    throw error;
  }
  if (options.json) {
    output.event("listening", { url: server.url, port: server.port });
    output.log(`Listening on ${server.url}`);
  } else output.line(`Listening on ${server.url}`);
  if (options.readyFile !== undefined) writeReadyFile(io.cwd, options.readyFile, server.url);

  if (settings.sources.length === 0) output.warn("no source configured (--write-key or config \"sources\"): any write key is accepted");
  if (settings.targets.length === 0) output.warn("no webhook URL (--url or config \"webhooks\"): messages are stored and wait for a run that has one");
  if (!settings.enabled) output.warn("the destination is switched off in the config (\"enabled\": false): calls are accepted and counted, nothing is forwarded");
  if (options.memory) output.warn("--memory: the queue is not durable; messages not yet delivered are lost when serve stops");
  const waiting = queue.pendingCount();
  if (waiting > 0) output.log(`resuming ${waiting} message${waiting === 1 ? "" : "s"} stored by a previous run (${stateDir})`);

  collector.start();
  const spinner = output.spinner(countsText(collector.counts()));
  const ticker = setInterval(() => spinner.update(countsText(collector.counts())), 500);

  await new Promise<void>((resolveStop) => {
    if (io.signal.aborted) resolveStop();
    else io.signal.addEventListener("abort", () => resolveStop(), { once: true });
  });
  clearInterval(ticker);
  spinner.stop();
  await server.close();
  await collector.close();

  const counts = collector.counts();
  output.event("summary", { ...counts });
  output.line(`Summary: ${countsText(counts)}`);
  if (counts.pending > 0 && !options.memory) output.log(`${counts.pending} message${counts.pending === 1 ? "" : "s"} kept in ${stateDir} for the next run`);
  return counts.failed > 0 ? 1 : 0;
}

function countsText(counts: CollectorCounts): string {
  return `${counts.accepted} accepted, ${counts.rejected} rejected, ${counts.filtered} filtered, ${counts.delivered} delivered, ${counts.retrying} retrying, ${counts.failed} failed, ${counts.pending} pending`;
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
  const reasons = result.urls.map((url) => `${url.url} ${url.status ?? "---"} after ${url.attempts} attempt${url.attempts === 1 ? "" : "s"}${url.error ? `: ${url.error}` : ""}`);
  output.log(`${output.color.red("✗")} gave up on ${type ?? "message"}${userId !== null ? ` ${userId}` : ""} (#${message.id}): ${reasons.join("; ")}`);
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

const rawSchema = z.object({
  port: integer("--port", 0, 65535).default(DEFAULT_SERVE_PORT),
  host: z.string().min(1).default("127.0.0.1"),
  writeKey: z.string().min(1).optional(),
  state: z.string().min(1).default(DEFAULT_STATE_DIR),
  memory: z.boolean().optional(),
  failed: z.boolean().optional(),
  ...deliveryOptionsShape,
  aliasKeys: aliasKeys.optional(),
  concurrency: integer("--concurrency", 1, 1024).optional(),
  strict: z.boolean().optional(),
  readyFile: z.string().min(1).optional(),
  json: z.boolean().optional(),
});

export function registerServe(program: Command, context: CommandContext): void {
  const command = program
    .command("serve")
    .description("local stand-in for the collection service: takes client batches, stores them durably, forwards them to the webhooks")
    .option("--port <n>", `port to listen on (0 = any free port)`, String(DEFAULT_SERVE_PORT))
    .option("--host <addr>", "address to listen on", "127.0.0.1")
    .option("--write-key <key>", "accept this write key (one source); without any source every key is accepted")
    .option("--state <dir>", "directory of the durable queue (SQLite)", DEFAULT_STATE_DIR)
    .option("--memory", "keep the queue in memory instead (nothing survives a restart)")
    .option("--failed", "print the messages given up (stored under --state) as JSON lines and exit");
  addDeliveryOptions(command, {
    config: "settings: sources, webhooks, sharedSecret, enabled, aliasKeys, userAgent (default ./webhook-cli.json when present)",
    timeout: "deadline per attempt (default 5s)",
  })
    .option("--alias-keys <style>", "alias keys of forwarded alias messages: spec or camel")
    .option("--concurrency <n>", `deliveries in flight at once (default ${DEFAULT_DELIVERY_CONCURRENCY})`)
    .option("--strict", "refuse a whole request (400) when one call in it is invalid, instead of dropping that call")
    .option("--ready-file <file>", "write the URL to this file once listening")
    .option("--json", "JSON lines on stdout: listening, rejected (invalid calls dropped), delivery (messages given up), summary")
    .addHelpText(
      "after",
      "\nExamples:\n  $ webhook-cli serve --write-key wk_test --url http://127.0.0.1:8080/hook --secret s3cret\n" +
        "  $ webhook-cli serve --config webhook-cli.json --state .webhook-cli --json\n" +
        "  $ curl -u wk_test: -H 'Content-Type: application/json' -d '{\"userId\":\"u1\",\"event\":\"Signed Up\"}' http://127.0.0.1:8088/v1/track",
    )
    .action(async (raw: Record<string, unknown>) => {
      context.exitCode = await serve(withDeliveryFlags(stripUndefined(parseOptions(rawSchema, raw))), context.io);
    });
}
