import { accessSync, constants, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { InputError, UsageError } from "../../errors.js";
import type { DeliveryResult } from "../../delivery/types.js";
import { MESSAGE_TYPES, type MessageType } from "../../messages/schemas.js";
import type { ReplayEntry } from "../../replay/envelope.js";
import { DEFAULT_CONCURRENCY, replay, type ReplaySummary } from "../../replay/replay.js";
import { spoolToTempFile } from "../../replay/spool.js";
import { junitXml, type JunitCase } from "../../report/junit.js";
import type { Clock } from "../../util/clock.js";
import { formatDuration } from "../../util/duration.js";
import { addDeliveryOptions, deliveryOptionsShape, resolveDeliveryOptions, withDeliveryFlags, type DeliveryFlags } from "../delivery-options.js";
import { interruptedExitCode, type CliIo, type CommandContext } from "../io.js";
import { collect, integer, messageType, number, parseOptions, stripUndefined } from "../options.js";
import { createOutput, type Output } from "../output.js";

export interface ReplayCommandOptions extends DeliveryFlags {
  /** A file, or `-` for standard input. */
  file: string;
  concurrency?: number;
  rate?: number;
  speed?: number;
  types?: MessageType[];
  fromLine?: number;
  skipInvalid?: boolean;
  deadLetter?: string;
  dryRun?: boolean;
  junit?: string;
  json?: boolean;
}

/** Injected in tests; the CLI uses the system clock. */
export interface ReplayDependencies {
  clock?: Clock;
}

// Bad lines listed one by one up to this many; the rest are counted.
const LISTED_BAD_LINES = 100;

/**
 * Re-signs and delivers a recorded NDJSON log (CONTRACT.md 3 and 4). Returns
 * 0 when all were delivered, 1 when any failed, 130/143 when interrupted;
 * bad input throws (exit 2) before anything is sent.
 */
export async function replayCommand(options: ReplayCommandOptions, io: CliIo, deps: ReplayDependencies = {}): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  const { settings, engineOptions } = resolveDeliveryOptions(options, io, { requireTargets: options.dryRun !== true });
  output.maskSecret(settings.secret);

  const fromStdin = options.file === "-";
  const name = fromStdin ? "stdin" : options.file;
  let path: string;
  let removeSpool: (() => void) | undefined;
  if (fromStdin) {
    const spool = await spoolToTempFile(io.stdin);
    path = spool.path;
    removeSpool = spool.remove;
  } else {
    path = resolve(io.cwd, options.file);
    // Fail early, with the file named, rather than deep inside the first pass.
    let isFile = false;
    try {
      accessSync(path, constants.R_OK);
      isFile = statSync(path).isFile();
    } catch (error) {
      throw new InputError(`cannot read: ${(error as Error).message}`, { file: options.file });
    }
    if (!isFile) throw new InputError("not a regular file (a pipe can be read as - from standard input)", { file: options.file });
  }

  const cases: JunitCase[] | undefined = options.junit !== undefined ? [] : undefined;
  let badListed = 0;
  const spinner = options.dryRun ? undefined : output.spinner("replaying…");
  const c = output.color;
  try {
    const summary = await replay({
      path,
      name,
      settings,
      ...engineOptions,
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      ...(options.rate !== undefined ? { rate: options.rate } : {}),
      ...(options.speed !== undefined ? { speed: options.speed } : {}),
      ...(options.types ? { types: options.types } : {}),
      ...(options.fromLine !== undefined ? { fromLine: options.fromLine } : {}),
      skipInvalid: options.skipInvalid === true,
      ...(options.deadLetter !== undefined ? { deadLetter: resolve(io.cwd, options.deadLetter) } : {}),
      dryRun: options.dryRun === true,
      signal: io.signal,
      ...(deps.clock ? { clock: deps.clock } : {}),
      onInvalid(line, reason) {
        badListed += 1;
        if (badListed <= LISTED_BAD_LINES) {
          const verb = options.skipInvalid ? "skipped" : "bad line";
          output.log(`${name}:${line}: ${verb}: ${reason}`);
          output.event("invalid", { line, reason, skipped: options.skipInvalid === true });
        }
      },
      onFailure(entry, result, failure) {
        output.event("delivery", {
          line: entry.line,
          type: entry.type,
          userId: entry.orderKey ?? null,
          delivered: false,
          urls: result?.urls ?? [],
          failure,
        });
        output.line(`${c.red("✗")} ${name}:${entry.line} ${entry.type}${entry.orderKey !== undefined ? ` ${entry.orderKey}` : ""}: ${failure.reason}`);
      },
      ...(cases ? { onMessage: (entry: ReplayEntry, result: DeliveryResult | undefined, ms: number) => cases.push(junitCase(entry, result, ms)) } : {}),
      onProgress(progress) {
        const rate = progress.elapsedMs > 0 ? (progress.sent * 1000) / progress.elapsedMs : 0;
        spinner?.update(`replaying: ${progress.sent} sent, ${progress.delivered} delivered, ${progress.failed} failed, ${Math.round(rate)}/s`);
      },
    });
    spinner?.stop();
    if (badListed > LISTED_BAD_LINES) output.log(`… and ${badListed - LISTED_BAD_LINES} more bad lines`);
    if (cases && options.junit !== undefined) writeJunit(resolve(io.cwd, options.junit), options.junit, name, cases, summary);
    printSummary(output, summary, options.deadLetter);
    if (summary.resumeLine !== undefined) {
      output.log(`interrupted: resume with --from-line ${summary.resumeLine}${options.deadLetter !== undefined ? ` (and replay ${options.deadLetter} for the ${summary.interrupted} interrupted)` : ""}`);
      return interruptedExitCode(io.signal);
    }
    return summary.failed > 0 ? 1 : 0;
  } finally {
    spinner?.stop();
    removeSpool?.();
  }
}

function printSummary(output: Output, s: ReplaySummary, deadLetter: string | undefined): void {
  output.event("summary", {
    lines: s.lines,
    messages: s.messages,
    invalid: s.invalid,
    filtered: s.filtered,
    sent: s.sent,
    delivered: s.delivered,
    failed: s.failed,
    interrupted: s.interrupted,
    retried: s.retried,
    deadLettered: s.deadLettered,
    p50Ms: round(s.p50Ms),
    p99Ms: round(s.p99Ms),
    elapsedMs: Math.round(s.elapsedMs),
    eventsPerSecond: Math.round(s.eventsPerSecond),
    dryRun: s.dryRun,
    resumeLine: s.resumeLine ?? null,
  });
  const extras = [s.invalid > 0 ? `${s.invalid} skipped (invalid)` : "", s.filtered > 0 ? `${s.filtered} filtered by --type` : ""].filter(Boolean).join(", ");
  if (s.dryRun) {
    output.line(`dry run: ${s.messages} message${s.messages === 1 ? "" : "s"} would be sent (${s.lines} lines${extras ? `, ${extras}` : ""})`);
    return;
  }
  output.line(
    `${s.sent} sent, ${s.delivered} delivered, ${s.failed} failed, ${s.retried} retried${s.interrupted > 0 ? `, ${s.interrupted} interrupted` : ""}${extras ? `, ${extras}` : ""}`,
  );
  output.line(`latency p50 ${formatDuration(s.p50Ms)}, p99 ${formatDuration(s.p99Ms)}; ${Math.round(s.eventsPerSecond)} events/s over ${formatDuration(s.elapsedMs)}`);
  if (s.deadLettered > 0 && deadLetter !== undefined) output.line(`${s.deadLettered} written to ${deadLetter}`);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function junitCase(entry: ReplayEntry, result: DeliveryResult | undefined, ms: number): JunitCase {
  const name = `line ${entry.line}: ${entry.type}${entry.orderKey !== undefined ? ` ${entry.orderKey}` : ""}`;
  const base = { name, classname: "webhook-cli.replay", time: ms / 1000 };
  if (result?.delivered) return base;
  const message = result === undefined || result.interrupted ? "interrupted" : result.urls.map((u) => `${u.url}: ${u.error ?? "failed"}`).join("; ");
  return { ...base, failure: { message, type: "delivery" } };
}

function writeJunit(path: string, flagValue: string, name: string, cases: JunitCase[], summary: ReplaySummary): void {
  try {
    writeFileSync(path, junitXml({ name: `webhook-cli replay ${name}`, cases, timestamp: new Date(), time: summary.elapsedMs / 1000 }));
  } catch (error) {
    throw new UsageError(`cannot write: ${(error as Error).message}`, { flag: "--junit", file: flagValue });
  }
}

const rawSchema = z.object({
  ...deliveryOptionsShape,
  concurrency: integer("--concurrency", 1, 10_000).optional(),
  rate: number("--rate", 0.001, 1_000_000).optional(),
  speed: number("--speed", 0.001, 1_000_000).optional(),
  type: z.array(z.string()).optional(),
  fromLine: integer("--from-line", 1).optional(),
  skipInvalid: z.boolean().optional(),
  deadLetter: z.string().optional(),
  dryRun: z.boolean().optional(),
  junit: z.string().optional(),
  json: z.boolean().optional(),
});

export function registerReplay(program: Command, context: CommandContext): void {
  const command = program
    .command("replay")
    .description("re-sign and deliver a recorded NDJSON log (listen --record envelopes, bare messages or dead-letter lines)")
    .argument("<file>", "the NDJSON log: a file, or - for standard input");
  addDeliveryOptions(command)
    .option("--concurrency <n>", `messages in flight at once (default ${DEFAULT_CONCURRENCY}); one user's messages stay in file order`)
    .option("--rate <n>", "at most this many messages started per second")
    .option("--speed <x>", "keep the recorded spacing (receivedAt, else timestamp), x times faster")
    .option("--type <type>", `only replay this message type (repeatable): ${MESSAGE_TYPES.join(", ")}`, collect)
    .option("--from-line <n>", "start at this line (inclusive), e.g. to resume an interrupted replay")
    .option("--skip-invalid", "send the valid lines even when some are bad (the bad ones are listed)")
    .option("--dead-letter <file>", "append every message not delivered to this file (replay accepts it again)")
    .option("--dry-run", "validate and count; send nothing")
    .option("--junit <file>", "write a JUnit XML report, one test case per message")
    .option("--json", "one JSON object per failed message on stdout, then a summary")
    .addHelpText(
      "after",
      "\nExamples:\n  $ webhook-cli replay recording.ndjson --url http://127.0.0.1:8080/hook --secret s3cret\n  $ webhook-cli replay recording.ndjson --url https://staging.example.com/hook --concurrency 32 --dead-letter failed.ndjson --retry-window 1m\n  $ webhook-cli replay failed.ndjson --url https://staging.example.com/hook --from-line 1200 --json",
    )
    .action(async (file: string, raw: Record<string, unknown>) => {
      const { type, ...rest } = withDeliveryFlags(stripUndefined(parseOptions(rawSchema, raw)));
      context.exitCode = await replayCommand(
        { ...rest, file, ...(type ? { types: type.map((t) => messageType("--type").parse(t)) } : {}) },
        context.io,
      );
    });
}
