import { accessSync, constants, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { InputError, UsageError } from "../../errors.js";
import type { DeliveryResult } from "../../delivery/types.js";
import { MESSAGE_TYPES, type MessageType } from "../../messages/schemas.js";
import type { ReplayEntry } from "../../replay/envelope.js";
import { DEFAULT_DELIVERY_CONCURRENCY } from "../../dispatch/dispatcher.js";
import { replay, type ReplayOptions, type ReplaySummary } from "../../replay/replay.js";
import type { Failure } from "../../delivery/failure.js";
import { spoolToTempFile } from "../../replay/spool.js";
import { junitXml, type JunitCase } from "../../report/junit.js";
import type { Clock } from "../../util/clock.js";
import { formatDuration } from "../../util/duration.js";
import { addDeliveryOptions, deliveryOptionsShape, resolveDeliveryOptions, withDeliveryFlags, type DeliveryFlags } from "../delivery-options.js";
import { interruptedExitCode, type CliIo, type CommandContext } from "../io.js";
import { collect, integer, messageType, number, parseOptions, stripUndefined } from "../options.js";
import { createOutput, type Output, type Spinner } from "../output.js";
import { RegressReporter, regressFlags, regressOptionsShape, type RegressFlags } from "./replay-regress.js";

export interface ReplayCommandOptions extends DeliveryFlags, RegressFlags {
  /** A file, or `-` for standard input. */
  file: string;
  concurrency?: number;
  rate?: number;
  speed?: number;
  types?: MessageType[];
  fromLine?: number;
  skipInvalid?: boolean;
  /** Lines that are not known messages are sent as read, with a warning. */
  raw?: boolean;
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
  const input = await openInput(options.file, io);
  try {
    const regress = await RegressReporter.open(output, options, io, input.name);
    const reporter = new ReplayCommandReporter(output, options, input.name, regress);
    const summary = await replay({
      path: input.path,
      name: input.name,
      settings,
      ...engineOptions,
      concurrency: options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY,
      ...(options.rate !== undefined ? { rate: options.rate } : {}),
      ...(options.speed !== undefined ? { speed: options.speed } : {}),
      ...(options.types ? { types: options.types } : {}),
      ...(options.fromLine !== undefined ? { fromLine: options.fromLine } : {}),
      skipInvalid: options.skipInvalid === true,
      raw: options.raw === true,
      onWarning(line, reason) {
        output.warn(`${input.name}:${line}: ${reason} (sent as read: --raw)`);
      },
      ...(options.deadLetter !== undefined ? { deadLetter: resolve(io.cwd, options.deadLetter) } : {}),
      dryRun: options.dryRun === true,
      signal: io.signal,
      ...(deps.clock ? { clock: deps.clock } : {}),
      ...reporter.hooks(),
      ...regress.replayOptions(io),
    }).finally(() => reporter.stopSpinner());
    reporter.finish();
    const cases = [...reporter.cases, ...regress.junitCases];
    if (options.junit !== undefined) writeJunit(resolve(io.cwd, options.junit), options.junit, input.name, cases, summary);
    printSummary(output, summary, options.deadLetter);
    if (!summary.dryRun) regress.report(summary.resumeLine !== undefined);
    if (summary.resumeLine !== undefined) {
      printResume(output, summary, options.deadLetter);
      return interruptedExitCode(io.signal);
    }
    return summary.failed > 0 || regress.failed ? 1 : 0;
  } finally {
    input.remove?.();
  }
}

/** The file to read: a regular file checked up front, or standard input spooled to a temporary file. */
async function openInput(file: string, io: CliIo): Promise<{ path: string; name: string; remove?: () => void }> {
  if (file === "-") {
    const spool = await spoolToTempFile(io.stdin);
    return { path: spool.path, name: "stdin", remove: spool.remove };
  }
  const path = resolve(io.cwd, file);
  // Fail early, with the file named, rather than deep inside the first pass.
  let isFile = false;
  try {
    accessSync(path, constants.R_OK);
    isFile = statSync(path).isFile();
  } catch (error) {
    throw new InputError(`cannot read: ${(error as Error).message}`, { file });
  }
  if (!isFile) throw new InputError("not a regular file (a pipe can be read as - from standard input)", { file });
  return { path, name: file };
}

/** What replay shows while it runs: bad lines, failed messages, the spinner, JUnit cases. */
class ReplayCommandReporter {
  readonly cases: JunitCase[] = [];
  private badListed = 0;
  private spinner: Spinner | undefined;

  constructor(
    private readonly output: Output,
    private readonly options: ReplayCommandOptions,
    private readonly name: string,
    private readonly regress: RegressReporter,
  ) {
    this.spinner = options.dryRun ? undefined : output.spinner("replaying…");
  }

  hooks(): Pick<ReplayOptions, "onInvalid" | "onFailure" | "onMessage" | "onProgress"> {
    return {
      onInvalid: (line, reason) => this.invalid(line, reason),
      onFailure: (entry, result, failure) => this.failed(entry, result, failure),
      ...withMessageHook(this.regress.onMessage(this.options.junit !== undefined ? (entry, result, ms) => this.cases.push(this.regress.junitCase(entry, junitCase(entry, result, ms))) : undefined)),
      onProgress: (progress) => {
        const rate = progress.elapsedMs > 0 ? (progress.sent * 1000) / progress.elapsedMs : 0;
        this.spinner?.update(`replaying: ${progress.sent} sent, ${progress.delivered} delivered, ${progress.failed} failed, ${Math.round(rate)}/s`);
      },
    };
  }

  /** After the run: the spinner stops and the bad lines not listed are counted. */
  finish(): void {
    this.stopSpinner();
    if (this.badListed > LISTED_BAD_LINES) this.output.log(`… and ${this.badListed - LISTED_BAD_LINES} more bad lines`);
  }

  stopSpinner(): void {
    this.spinner?.stop();
    this.spinner = undefined;
  }

  private invalid(line: number, reason: string): void {
    this.badListed += 1;
    if (this.badListed > LISTED_BAD_LINES) return;
    const skipped = this.options.skipInvalid === true;
    this.output.log(`${this.name}:${line}: ${skipped ? "skipped" : "bad line"}: ${reason}`);
    this.output.event("invalid", { line, reason, skipped });
  }

  private failed(entry: ReplayEntry, result: DeliveryResult | undefined, failure: Failure): void {
    const { output } = this;
    output.event("delivery", { line: entry.line, type: entry.type ?? null, userId: entry.orderKey ?? null, delivered: false, urls: result?.urls.map(deliveryUrl) ?? [], failure });
    const user = entry.orderKey !== undefined ? ` ${entry.orderKey}` : "";
    output.line(`${output.color.red("✗")} ${this.name}:${entry.line} ${entry.type ?? "raw"}${user}: ${failure.reason}`);
  }
}

/** A `delivery` event's URL (CONTRACT.md 3): the captured answer (--results) stays out. */
function deliveryUrl({ url, status, attempts, error, ms }: DeliveryResult["urls"][number]): Record<string, unknown> {
  return { url, status, attempts, error, ms };
}

function withMessageHook(onMessage: ReplayOptions["onMessage"]): Pick<ReplayOptions, "onMessage"> {
  return onMessage ? { onMessage } : {};
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
  const extras = [s.invalid > 0 ? `${s.invalid} skipped (invalid)` : "", s.filtered > 0 ? `${s.filtered} filtered out` : ""].filter(Boolean).join(", ");
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

/** The low-water resume hint (CONTRACT.md 4 "Resume"): resuming may repeat, never skip. */
function printResume(output: Output, s: ReplaySummary, deadLetter: string | undefined): void {
  output.log(`interrupted: resume with --from-line ${s.resumeLine}${deadLetter !== undefined ? ` (and replay ${deadLetter} for the ${s.interrupted} interrupted)` : ""}`);
  const later = s.deliveredAfterResume;
  if (later > 0) output.log(`${later} later line${later === 1 ? " was" : "s were"} delivered already and will be sent again`);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function junitCase(entry: ReplayEntry, result: DeliveryResult | undefined, ms: number): JunitCase {
  const name = `line ${entry.line}: ${entry.type ?? "raw"}${entry.orderKey !== undefined ? ` ${entry.orderKey}` : ""}`;
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
  raw: z.boolean().optional(),
  deadLetter: z.string().optional(),
  dryRun: z.boolean().optional(),
  junit: z.string().optional(),
  json: z.boolean().optional(),
  ...regressOptionsShape,
});

export function registerReplay(program: Command, context: CommandContext): void {
  const command = program
    .command("replay")
    .description("re-sign and deliver a recorded NDJSON log (listen --record envelopes, bare messages or dead-letter lines)")
    .argument("<file>", "the NDJSON log: a file, or - for standard input");
  addDeliveryOptions(command)
    .option("--concurrency <n>", `messages in flight at once (default ${DEFAULT_DELIVERY_CONCURRENCY}); one user's messages stay in file order`)
    .option("--rate <n>", "at most this many messages started per second")
    .option("--speed <x>", "keep the recorded spacing (receivedAt, else timestamp), x times faster")
    .option("--type <type>", `only replay this message type (repeatable): ${MESSAGE_TYPES.join(", ")}`, collect)
    .option("--from-line <n>", "start at this line (inclusive), e.g. to resume an interrupted replay")
    .option("--skip-invalid", "send the valid lines even when some are bad (the bad ones are listed)")
    .option("--raw", "send lines that are not known messages (or not JSON) as read, with a warning, instead of refusing them")
    .option("--dead-letter <file>", "append every message not delivered to this file (replay accepts it again)")
    .option("--line <n|a-b>", "only replay this line, or lines A to B (repeatable)", collect)
    .option("--message-id <id>", "only replay the message with this messageId (repeatable)", collect)
    .option("--user-id <id>", "only replay this user's messages (the per-user order key; repeatable)", collect)
    .option("--shard <k/n>", "only replay share K of N, split by user (N CI jobs replay one log between them)")
    .option("--results <file>", "append one line per message with each URL's answer (status, content-type, body), in input order")
    .option("--compare <file>", "compare the answers with an earlier --results file (or a listen --forward-to recording); exit 1 on a change")
    .option("--ignore <path>", "with --compare: leave this JSON body path out, e.g. '$.requestId' (repeatable)", collect)
    .option("--expect-status <list>", "an answer outside this list is a failure, e.g. 2xx or 200,202")
    .option("--dry-run", "validate and count; send nothing")
    .option("--junit <file>", "write a JUnit XML report, one test case per message")
    .option("--json", "one JSON object per failed message on stdout, then a summary")
    .addHelpText(
      "after",
      "\nExamples:\n  $ webhook-cli replay recording.ndjson --url http://127.0.0.1:8080/hook --secret s3cret\n  $ webhook-cli replay recording.ndjson --url https://staging.example.com/hook --concurrency 32 --dead-letter failed.ndjson --retry-window 1m\n  $ webhook-cli replay failed.ndjson --url https://staging.example.com/hook --from-line 1200 --json\n  $ webhook-cli replay recording.ndjson --url http://127.0.0.1:3001/hook --results new.ndjson --compare old.ndjson --ignore '$.requestId'",
    )
    .action(async (file: string, raw: Record<string, unknown>) => {
      const { type, ...rest } = regressFlags(withDeliveryFlags(stripUndefined(parseOptions(rawSchema, raw))));
      context.exitCode = await replayCommand(
        { ...rest, file, ...(type ? { types: type.map((t) => messageType("--type").parse(t)) } : {}) },
        context.io,
      );
    });
}
