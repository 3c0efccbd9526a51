import type { Secrets } from "../../../safe-text/redact.js";
import { resolve } from "node:path";
import { InputError, UsageError } from "../../../errors.js";
import type { DeliveryResult } from "../../../delivery/types.js";
import type { ReplayEntry } from "../../../replay/envelope.js";
import { DEFAULT_DELIVERY_CONCURRENCY } from "../../../dispatch/dispatcher.js";
import { replay } from "../../../replay/replay.js";
import type { ReplayOptions, ReplaySummary } from "../../../replay/types.js";
import type { Failure } from "../../../delivery/failure.js";
import { spoolToTempFile } from "../../../replay/spool.js";
import { deliveryCase, writeJunitFile, type JunitCase } from "../../../report/junit.js";
import type { Clock } from "../../../util/clock.js";
import { formatDuration } from "../../../util/duration.js";
import { isReadableFile } from "../../../util/readable-file.js";
import { undiciEngine } from "../../../delivery/undici-engine.js";
import type { DestinationSettings } from "../../../config/destination.js";
import { resolveDeliveryOptions, warnIfUnsigned, type EngineOptions } from "../../shared/delivery-options.js";
import { commandFunctions, type DestinationFunctions, functionEngineOptions, runSignal } from "../../shared/functions.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import type { ReplayFlags } from "./options.js";
import { deliverySummary } from "../../terminal/delivery-summary.js";
import { invocationJson } from "../../terminal/invocation-lines.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { logAttempt } from "../../terminal/attempt-log.js";
import { DryRun } from "../../shared/dry-run.js";
import { INTERRUPTED, readStdin } from "../../shared/stdin.js";
import { retryWindowNotice, StatusLine } from "../../terminal/status-line.js";
import { parseRegressFlags, refuseCompareAsResults, RegressReporter, selectionOfFlags } from "./regress.js";

export type ReplayCommandOptions = ReplayFlags & {
  /** A file, or `-` for standard input. */
  file: string;
};

/** Injected in tests; the CLI uses the system clock. */
export interface ReplayDependencies {
  clock?: Clock;
  /** How often a status line is printed without a terminal (default 10 s). */
  statusIntervalMs?: number;
}

// Bad lines listed one by one up to this many; the rest are counted.
const LISTED_BAD_LINES = 100;

/**
 * Re-signs and delivers a recorded NDJSON log (docs/recording.md#replay-input, docs/exit-codes.md#per-command). Returns
 * 0 when all were delivered, 1 when any failed, 130/143 when interrupted;
 * bad input throws (exit 2) before anything is sent.
 */
export async function replayCommand(options: ReplayCommandOptions, io: CliIo, deps: ReplayDependencies = {}): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  if (options.quiet && !options.dryRun) throw new UsageError("only goes with --dry-run (it prints the counts instead of the requests)", { flag: "--quiet" });
  const resolved = resolveDeliveryOptions(options, io, { requireTargets: options.dryRun !== true });
  output.maskSecret(resolved.settings.secrets);
  if (options.dryRun !== true) refuseCompareAsResults(options, io.cwd);

  const input = await openInput(options.file, io, output);
  if (input === INTERRUPTED) return interruptedExitCode(io.signal);
  let functions: DestinationFunctions | undefined;
  try {
    // Loaded before anything is read for sending: a function that does not load is a one-line answer (exit 2).
    functions = options.dryRun ? undefined : await commandFunctions(options, resolved.settings, io.cwd, deps.clock);
    const code = await replayInput(options, io, deps, { input, output, functions, ...resolved, settings: functions?.settings ?? resolved.settings });
    // A package a function needs is not installed: the run stopped there, with its resume line; exit 2.
    const setup = functions?.setupError();
    if (setup !== undefined) throw setup;
    return code;
  } finally {
    await functions?.close();
    input.remove?.();
  }
}

interface ReplayRun {
  input: { path: string; name: string };
  output: Output;
  settings: DestinationSettings;
  engineOptions: EngineOptions;
  functions: DestinationFunctions | undefined;
}

/** The replay itself, its reports and its exit code. */
async function replayInput(options: ReplayCommandOptions, io: CliIo, deps: ReplayDependencies, run: ReplayRun): Promise<number> {
  const { input, output, settings, engineOptions } = run;
  let reporter: ReplayCommandReporter | undefined;
  let regress: RegressReporter | undefined;
  const dryRun = options.dryRun && !options.quiet ? dryRunPrinter(output, input.name, settings, engineOptions) : undefined;
  try {
    const flags = { ...parseRegressFlags(options), junit: options.junit };
    regress = await RegressReporter.open(output, flags, io, input.name, selectionOfFlags(flags, options.types, options.fromLine));
    reporter = new ReplayCommandReporter(output, options, input.name, deps.statusIntervalMs, regress, () => warnIfUnsigned(output, settings));
    const summary = await replay({
      ...runOptions(options, io, { input, settings, engineOptions, dryRun, clock: deps.clock, functions: run.functions }, output),
      ...reporter.hooks(),
      ...regress.replayOptions(io),
    });
    reporter.finish();
    dryRun?.end();
    // Stopped while the rest of the --compare file was read: an interruption too (nothing counted missing).
    const interrupted = summary.resumeLine !== undefined || (!summary.dryRun && !(await regress.settle(io.signal)));
    // The summary and the resume hint come first: a file that cannot be written after them loses no line.
    printSummary(output, summary, options.deadLetter);
    if (!summary.dryRun) regress.report(interrupted);
    if (summary.resumeLine !== undefined) printResume(output, summary, options.deadLetter);
    if (options.junit !== undefined) writeJunit(options.junit, io, input.name, [...reporter.cases, ...regress.junitCases], summary, settings.secrets);
    // What stopped the run part way: reported last, with its own exit status (never 0).
    if (summary.error) throw summary.error.value;
    if (interrupted) return interruptedExitCode(io.signal);
    return summary.failed > 0 || regress.failed ? 1 : 0;
  } finally {
    reporter?.stopStatus();
    regress?.close();
    await dryRun?.close();
  }
}

/** What replay runs on: the input, the settings, the flags; the reporters' hooks are added to it. */
function runOptions(
  options: ReplayCommandOptions,
  io: CliIo,
  run: {
    input: { path: string; name: string };
    settings: DestinationSettings;
    engineOptions: EngineOptions;
    dryRun: ReturnType<typeof dryRunPrinter>;
    clock: Clock | undefined;
    functions: DestinationFunctions | undefined;
  },
  output: Output,
): ReplayOptions {
  const { input, dryRun, functions } = run;
  return {
    path: input.path,
    name: input.name,
    settings: run.settings,
    ...functionEngineOptions(functions),
    ...run.engineOptions,
    concurrency: options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY,
    rate: options.rate,
    speed: options.speed,
    skipInvalid: options.skipInvalid === true,
    allowEmpty: options.allowEmpty === true,
    raw: options.raw === true,
    onWarning(line, reason) {
      output.warn(`${input.name}:${line}: ${reason} (sent as read: --raw)`);
    },
    deadLetter: options.deadLetter === undefined ? undefined : resolve(io.cwd, options.deadLetter),
    dryRun: options.dryRun === true,
    onDryRun: dryRun?.print,
    signal: runSignal(io.signal, functions),
    clock: run.clock,
  };
}

/** --junit: the deliveries' cases and the comparison's, the suite named by the input. */
function writeJunit(file: string, io: CliIo, name: string, cases: JunitCase[], summary: ReplaySummary, secret: Secrets): void {
  writeJunitFile(io.cwd, file, { name: `webhook-cli replay ${name}`, cases, timestamp: new Date(), time: summary.elapsedMs / 1000, secret });
}

/**
 * `--dry-run` prints each message's exact request to every URL, as `send
 * --dry-run` does; without a URL (or with --quiet) only the counts.
 */
function dryRunPrinter(output: Output, name: string, settings: DestinationSettings, engineOptions: EngineOptions) {
  if (settings.targets.length === 0) return undefined;
  const engine = undiciEngine(settings, engineOptions);
  const dryRun = new DryRun(output, engine, settings);
  return {
    print(entry: ReplayEntry): void {
      dryRun.add({ line: entry.line, where: `${name}:${entry.line}`, entry });
    },
    end: () => dryRun.end(),
    close: () => engine.close(),
  };
}

/** The file to read: a regular file checked up front, or standard input spooled to a temporary file. */
async function openInput(file: string, io: CliIo, output: Output): Promise<{ path: string; name: string; remove?: () => void } | typeof INTERRUPTED> {
  if (file === "-") {
    const spool = await readStdin(io, output, () => spoolToTempFile(io.stdin, io.signal));
    return spool === INTERRUPTED ? spool : { path: spool.path, name: "stdin", remove: spool.remove };
  }
  const path = resolve(io.cwd, file);
  // Fail early, with the file named, rather than deep inside the first pass.
  if (!isReadableFile(path, { file })) throw new InputError("not a regular file (a pipe can be read as - from standard input)", { file });
  return { path, name: file };
}

/** What replay shows while it runs: bad lines, failed messages, the spinner, JUnit cases. */
class ReplayCommandReporter {
  readonly cases: JunitCase[] = [];
  private badListed = 0;
  private status: StatusLine | undefined;

  constructor(
    private readonly output: Output,
    private readonly options: ReplayCommandOptions,
    private readonly name: string,
    private readonly statusIntervalMs: number | undefined,
    private readonly regress: RegressReporter,
    /** Once the validation pass found something to send, so a mistake in the input is still a one-line answer. */
    private readonly beforeSending: () => void,
  ) {}

  hooks(): Pick<ReplayOptions, "onInvalid" | "onFailure" | "onMessage" | "onSending" | "onAttempt" | "keepResponse"> {
    const verbose = this.options.verbose === true;
    const notice = retryWindowNotice(this.output, this.options.retryWindowMs === undefined);
    return {
      onInvalid: (line, reason) => this.invalid(line, reason),
      onFailure: (entry, result, failure) => this.failed(entry, result, failure),
      ...withMessageHook(
        this.regress.onMessage(
          this.options.junit !== undefined ? (entry, result, ms) => this.cases.push(this.regress.junitCase(entry, junitCase(entry, result, ms))) : undefined,
        ),
      ),
      onSending: (progress) => {
        this.beforeSending();
        this.status = new StatusLine(this.output, "replay", progress, this.statusIntervalMs);
        this.status.start();
      },
      onAttempt: (_entry, event) => {
        if (verbose) logAttempt(this.output, event);
        notice(event);
      },
      keepResponse: verbose,
    };
  }

  /** After the run: the last status line, and the bad lines not listed are counted. */
  finish(): void {
    this.stopStatus();
    if (this.badListed > LISTED_BAD_LINES) this.output.log(`… and ${this.badListed - LISTED_BAD_LINES} more bad lines`);
  }

  stopStatus(): void {
    this.status?.stop();
    this.status = undefined;
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
    output.event("delivery", {
      line: entry.line,
      type: entry.type ?? null,
      userId: entry.orderKey ?? null,
      delivered: false,
      urls: result?.urls.map(deliveryUrl) ?? [],
      failure,
    });
    const user = entry.orderKey !== undefined ? ` ${entry.orderKey}` : "";
    output.line(`${output.color.red("✗")} ${this.name}:${entry.line} ${entry.type ?? "raw"}${user}: ${failure.reason}`);
  }
}

/** A `delivery` event's URL (docs/cli.md#json-events): the captured answer (--results) stays out. */
function deliveryUrl({ url, status, attempts, error, ms, invocation }: DeliveryResult["urls"][number]): Record<string, unknown> {
  return { url, status, attempts, error, ms, ...(invocation !== undefined ? { invocation: invocationJson(invocation) } : {}) };
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
    skipped: s.skipped,
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
    deliveredAfterResume: s.deliveredAfterResume,
  });
  const extras = [s.invalid > 0 ? `${s.invalid} skipped (invalid)` : "", s.filtered > 0 ? `${s.filtered} filtered out` : ""].filter(Boolean).join(", ");
  if (s.dryRun) {
    output.line(`dry run: ${s.messages} message${s.messages === 1 ? "" : "s"} would be sent (${s.lines} lines${extras ? `, ${extras}` : ""})`);
    return;
  }
  const interrupted = s.resumeLine !== undefined || s.interrupted > 0;
  output.line(
    deliverySummary({
      messages: s.messages,
      delivered: s.delivered,
      skipped: s.skipped,
      failed: s.failed,
      retried: s.retried,
      interrupted,
      extras: extras ? [extras] : [],
    }),
  );
  output.line(
    `latency p50 ${formatDuration(s.p50Ms)}, p99 ${formatDuration(s.p99Ms)}; ${Math.round(s.eventsPerSecond)} events/s over ${formatDuration(s.elapsedMs)}`,
  );
  if (s.deadLettered > 0 && deadLetter !== undefined) output.line(`${s.deadLettered} written to ${deadLetter}`);
}

/** The low-water resume hint (docs/recording.md#resume): resuming may repeat, never skip. */
function printResume(output: Output, s: ReplaySummary, deadLetter: string | undefined): void {
  const later = s.deliveredAfterResume;
  const again = later > 0 ? ` (${later} later line${later === 1 ? " was" : "s were"} delivered already and will be sent again)` : "";
  output.log(`${s.error ? "stopped by the error below" : "interrupted"}: resume with --from-line ${s.resumeLine}${again}`);
  // The dead-letter file holds only final failures; the interrupted messages are at or after the resume line.
  if (deadLetter !== undefined && s.deadLettered > 0)
    output.log(`the ${s.deadLettered} that failed for good are in ${deadLetter}: replay it too once the receiver is fixed`);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function junitCase(entry: ReplayEntry, result: DeliveryResult | undefined, ms: number): JunitCase {
  return deliveryCase(
    `line ${entry.line}: ${entry.type ?? "raw"}${entry.orderKey !== undefined ? ` ${entry.orderKey}` : ""}`,
    "webhook-cli.replay",
    result,
    ms,
  );
}
