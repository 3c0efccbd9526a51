import type { Secrets } from "../../../safe-text/redact.js";
import { InputError, UsageError } from "../../../errors.js";
import type { AttemptEvent, DeliveryResult } from "../../../delivery/types.js";
import { undiciEngine } from "../../../delivery/undici-engine.js";
import { Dispatcher, type DispatchEntry, type DispatchSummary, type MessageHooks } from "../../../dispatch/dispatcher.js";
import { batchingFor } from "../../../dispatch/units.js";
import { userIdOf } from "../../../messages/check.js";
import { exampleMessage } from "../../../messages/examples.js";
import type { InputMessage } from "../../../messages/input.js";
import type { AliasKeys } from "../../../messages/schemas.js";
import type { Clock, Random } from "../../../util/clock.js";
import { formatDuration } from "../../../util/duration.js";
import { logFailedAttempt, resolveDeliveryOptions, warnIfUnsigned } from "../../shared/delivery-options.js";
import { commandFunctions, functionEngineOptions, runSignal } from "../../shared/functions.js";
import type { DestinationSettings } from "../../../config/destination.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import { EXAMPLE_FLAGS } from "../../options/example.js";
import type { SendFlags } from "./options.js";
import { createOutput, type Output, type Spinner } from "../../terminal/output.js";
import { logAttempt } from "../../terminal/attempt-log.js";
import { DryRun } from "../../shared/dry-run.js";
import { retryWindowNotice, StatusLine } from "../../terminal/status-line.js";
import { readMessages } from "../../shared/message-input.js";
import { INTERRUPTED } from "../../shared/stdin.js";
import { deliveryCase, writeJunitFile, type JunitCase } from "../../../report/junit.js";
import { deliverySummary } from "../../terminal/delivery-summary.js";
import { detailLines, functionVerdict, urlJson } from "../../terminal/invocation-lines.js";

/** With `type`, the example's overrides are those of `generate`. */
export type SendOptions = SendFlags & {
  /** A file, `-` for stdin; or use `type`. */
  file?: string | undefined;
};

/** Injected in tests; the CLI uses the system clock and Math.random. */
export interface SendDependencies {
  clock?: Clock | undefined;
  random?: Random | undefined;
  /** How often a status line is printed without a terminal (default 10 s). */
  statusIntervalMs?: number;
}

/**
 * Signs and delivers messages in input order, one at a time, through the
 * delivery engine. Everything is validated before the first request; returns
 * 0 when all were delivered, 1 when any failed, 130/143 when interrupted.
 */
export async function send(options: SendOptions, io: CliIo, deps: SendDependencies = {}): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  checkCombination(options);
  const resolved = resolveDeliveryOptions(options, io, { requireTargets: true, aliasKeys: options.aliasKeys });
  output.maskSecret(resolved.settings.secrets);
  const messages = await readInput(options, io, resolved.settings.aliasKeys, output);
  if (messages === INTERRUPTED) return interruptedExitCode(io.signal);
  // Said once the input checked out, so a mistake in it is still a one-line answer.
  warnIfUnsigned(output, resolved.settings);
  // Destination functions load here: a file that does not parse is a one-line answer too, before anything runs.
  const functions = await commandFunctions(options, resolved.settings, io.cwd, deps.clock);
  const settings = functions?.settings ?? resolved.settings;
  const engine = undiciEngine(settings, {
    ...resolved.engineOptions,
    clock: deps.clock,
    random: deps.random,
    ...functionEngineOptions(functions),
  });
  const reporter = new SendReporter(output, options.verbose === true, retryWindowNotice(output, resolved.engineOptions.retryWindowMs === undefined));
  try {
    if (options.dryRun) return showDryRun(new DryRun(output, engine, settings), messages, options);
    const code = await deliverAll(messages, { options, io, deps, output, engine, settings, reporter, signal: runSignal(io.signal, functions) });
    // A package a function needs is not installed: the run stopped there (the rest not sent), exit 2.
    const setup = functions?.setupError();
    if (setup !== undefined) throw setup;
    return code;
  } finally {
    reporter.stopSpinner();
    await engine.close();
    await functions?.close();
  }
}

interface SendRun {
  options: SendOptions;
  io: CliIo;
  deps: SendDependencies;
  output: Output;
  engine: ReturnType<typeof undiciEngine>;
  settings: DestinationSettings;
  reporter: SendReporter;
  signal: AbortSignal;
}

/** The messages through the dispatcher, in input order, one at a time; the summary, the JUnit file; the exit code. */
async function deliverAll(messages: readonly InputMessage[], run: SendRun): Promise<number> {
  const { options, output, reporter } = run;
  const started = performance.now();
  const dispatcher = new Dispatcher<SendEntry>({
    // In input order, one at a time. Without --raw, each body is JSON.stringify of its message.
    source: messages.map((input, i) => ({
      line: i + 1,
      orderKey: undefined,
      body: input.body,
      time: undefined,
      input,
      canonical: options.raw !== true,
      ...identityOf(input),
    })),
    engine: run.engine,
    // Webhooks (Actions) with a batch size, or a function's onBatch: each target's own batches (docs/actions.md#batches, docs/functions.md#batches).
    batching: batchingFor(run.settings),
    concurrency: 1,
    signal: run.signal,
    hooks: reporter.hooks,
  });
  // Many messages without a terminal: status lines, so a CI log never looks hung. (On a terminal the retry spinner shows.)
  const status = messages.length > 1 && !output.spins ? new StatusLine(output, "send", () => dispatcher.progress, run.deps.statusIntervalMs) : undefined;
  status?.start();
  const summary = await dispatcher.run().finally(() => status?.stop());
  const code = printSummary(output, messages.length, summary, run.io.signal);
  if (options.junit !== undefined) writeJunit(options.junit, options, run.io, { cases: reporter.cases, started, secret: run.settings.secrets });
  return code;
}

/** --dry-run: what each message would send, nothing sent; 0. */
function showDryRun(dryRun: DryRun, messages: readonly InputMessage[], options: SendOptions): number {
  for (const input of messages) dryRun.add({ ...input, entry: { body: input.body, canonical: options.raw !== true, ...identityOf(input) } });
  dryRun.end();
  return 0;
}

/** --junit: one case per message, the suite named by the input. */
function writeJunit(file: string, options: SendOptions, io: CliIo, run: { cases: JunitCase[]; started: number; secret: Secrets }): void {
  const name = options.file === undefined ? "--type" : options.file === "-" ? "stdin" : options.file;
  writeJunitFile(io.cwd, file, {
    name: `webhook-cli send ${name}`,
    cases: run.cases,
    timestamp: new Date(),
    time: (performance.now() - run.started) / 1000,
    secret: run.secret,
  });
}

interface SendEntry extends DispatchEntry {
  input: InputMessage;
}

/** Per message: the spinner while a retry waits, --verbose attempts, failed attempts, the result line. */
class SendReporter {
  private spinner: Spinner | undefined;
  readonly hooks: MessageHooks<SendEntry>;
  /** JUnit: one case per message, failing unless delivered (unstarted ones included). */
  readonly cases: JunitCase[] = [];

  constructor(output: Output, verbose: boolean, notice: (event: AttemptEvent) => void) {
    this.hooks = {
      keepResponse: verbose,
      onAttempt: (_entry, event) => {
        this.stopSpinner();
        if (verbose) logAttempt(output, event);
        logFailedAttempt(output, event);
        notice(event);
        if (event.retryInMs !== undefined) this.spinner = output.spinner(`waiting ${formatDuration(event.retryInMs)} to retry ${event.url}`);
      },
      onResult: (entry, result, ms) => {
        this.stopSpinner();
        report(output, entry.input, result);
        this.cases.push(deliveryCase(caseName(entry.input), "webhook-cli.send", result, ms));
      },
      onUnstarted: (entry) => this.cases.push(deliveryCase(caseName(entry.input), "webhook-cli.send", undefined, 0)),
    };
  }

  stopSpinner(): void {
    this.spinner?.stop();
    this.spinner = undefined;
  }
}

/** What a scheme's message id (derived from the message's messageId) and event header (its type) come from. */
function identityOf(input: InputMessage): { messageId: string | undefined; type: string | undefined } {
  const message = input.message as { messageId?: unknown; type?: unknown } | undefined;
  return {
    messageId: typeof message?.messageId === "string" ? message.messageId : undefined,
    type: typeof message?.type === "string" ? message.type : undefined,
  };
}

function caseName(input: InputMessage): string {
  return `${input.where}: ${input.message?.type ?? "raw"}`;
}

function printSummary(output: Output, total: number, s: DispatchSummary, signal: AbortSignal): number {
  const { delivered, skipped, failed } = s;
  const interrupted = s.stopped;
  const notDelivered = total - delivered - skipped - failed;
  output.event("summary", { messages: total, delivered, skipped, failed, notDelivered, interrupted });
  output.line(deliverySummary({ messages: total, delivered, skipped, failed, retried: s.retried, interrupted }));
  if (interrupted) {
    output.log(`interrupted: ${notDelivered} message${notDelivered === 1 ? " was" : "s were"} not delivered (${total - s.sent} not sent)`);
    return interruptedExitCode(signal);
  }
  return failed > 0 ? 1 : 0;
}

function checkCombination(options: SendOptions): void {
  if (options.file !== undefined && options.type !== undefined) {
    throw new UsageError("give either a FILE (or - for stdin) or --type, not both", { flag: "--type" });
  }
  if (options.raw && options.type !== undefined) throw new UsageError("--raw sends a FILE's bodies as read; --type builds a valid message", { flag: "--raw" });
  if (options.file === undefined && options.type === undefined) {
    throw new UsageError("nothing to send: give a file, - for standard input, or --type TYPE");
  }
  if (options.type === undefined) {
    for (const { key, flag } of EXAMPLE_FLAGS) {
      if (options[key] !== undefined) throw new UsageError(`${flag} applies to the message generated with --type`, { flag });
    }
  }
}

async function readInput(options: SendOptions, io: CliIo, keys: AliasKeys, output: Output): Promise<InputMessage[] | typeof INTERRUPTED> {
  if (options.type !== undefined) {
    const message = exampleMessage(options.type, { ...options, aliasKeys: keys });
    return [{ message, body: JSON.stringify(message), line: 1, where: "--type" }];
  }
  return readMessages(options.file as string, io, output, {
    command: "send",
    raw: options.raw === true,
    onEmpty: (name) => {
      if (options.allowEmpty) return [];
      throw new InputError("nothing to send: the input is empty; nothing sent (--allow-empty accepts that)", { file: name });
    },
  });
}

function report(output: Output, input: InputMessage, result: DeliveryResult): void {
  const type = input.message?.type ?? "raw";
  const userId = userIdOf(input.message as unknown as Record<string, unknown> | undefined) ?? null;
  output.event("delivery", {
    line: input.line,
    type,
    userId,
    delivered: result.delivered,
    ...(result.skipped ? { skipped: true } : {}),
    urls: result.urls.map(urlJson),
  });
  const c = output.color;
  const label = `${input.where} ${type}${userId !== null ? ` ${userId}` : ""}`;
  for (const url of result.urls) {
    const ok = url.status !== null && url.status >= 200 && url.status < 300;
    const mark = ok ? c.green("✓") : result.interrupted ? c.yellow("!") : url.skipped !== undefined ? c.dim("-") : c.red("✗");
    const attempts = `${url.attempts} attempt${url.attempts === 1 ? "" : "s"}, ${formatDuration(url.ms)}`;
    if (url.invocation !== undefined || url.skipped !== undefined) {
      // A destination function: what it did, as `function run` shows it.
      output.line(`${mark} ${label} → ${url.url} ${functionVerdict(url, result.interrupted)}, ${attempts}`);
      if (url.invocation !== undefined) for (const line of detailLines(url.invocation)) output.line(`    ${line}`);
      continue;
    }
    const status = url.status === null ? "---" : String(url.status);
    const verdict = ok ? "delivered" : result.interrupted ? "interrupted" : result.delivered ? "not retried (delivered elsewhere)" : "failed";
    const why = !ok && url.error ? `: ${url.error}` : "";
    output.line(`${mark} ${label} → ${url.url} ${status} ${verdict}, ${attempts}${why}`);
  }
}
