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
  const { settings, engineOptions } = resolveDeliveryOptions(options, io, { requireTargets: true, aliasKeys: options.aliasKeys });
  output.maskSecret(settings.secret);
  const messages = await readInput(options, io, settings.aliasKeys, output);
  if (messages === INTERRUPTED) return interruptedExitCode(io.signal);
  // Said once the input checked out, so a mistake in it is still a one-line answer.
  warnIfUnsigned(output, settings);

  const engine = undiciEngine(settings, {
    ...engineOptions,
    clock: deps.clock,
    random: deps.random,
  });
  const reporter = new SendReporter(output, options.verbose === true, retryWindowNotice(output, engineOptions.retryWindowMs === undefined));
  const started = performance.now();
  try {
    if (options.dryRun) return showDryRun(new DryRun(output, engine, settings), messages, options);
    const dispatcher = new Dispatcher<SendEntry>({
      // In input order, one at a time. Without --raw, each body is JSON.stringify of its message.
      source: messages.map((input, i) => ({ line: i + 1, orderKey: undefined, body: input.body, time: undefined, input, canonical: options.raw !== true })),
      engine,
      // Webhooks (Actions) with a batch size: each target's own batches (docs/actions.md#batches).
      batching: batchingFor(settings),
      concurrency: 1,
      signal: io.signal,
      hooks: reporter.hooks,
    });
    // Many messages without a terminal: status lines, so a CI log never looks hung. (On a terminal the retry spinner shows.)
    const status = messages.length > 1 && !output.spins ? new StatusLine(output, "send", () => dispatcher.progress, deps.statusIntervalMs) : undefined;
    status?.start();
    const summary = await dispatcher.run().finally(() => status?.stop());
    const code = printSummary(output, messages.length, summary, io.signal);
    if (options.junit !== undefined) writeJunit(options.junit, options, io, { cases: reporter.cases, started, secret: settings.secret });
    return code;
  } finally {
    reporter.stopSpinner();
    await engine.close();
  }
}

/** --dry-run: what each message would send, nothing sent; 0. */
function showDryRun(dryRun: DryRun, messages: readonly InputMessage[], options: SendOptions): number {
  for (const input of messages) dryRun.add({ ...input, entry: { body: input.body, canonical: options.raw !== true } });
  dryRun.end();
  return 0;
}

/** --junit: one case per message, the suite named by the input. */
function writeJunit(file: string, options: SendOptions, io: CliIo, run: { cases: JunitCase[]; started: number; secret: string | undefined }): void {
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

function caseName(input: InputMessage): string {
  return `${input.where}: ${input.message?.type ?? "raw"}`;
}

function printSummary(output: Output, total: number, s: DispatchSummary, signal: AbortSignal): number {
  const { delivered, failed } = s;
  const interrupted = s.stopped;
  const notDelivered = total - delivered - failed;
  output.event("summary", { messages: total, delivered, failed, notDelivered, interrupted });
  output.line(deliverySummary({ messages: total, delivered, failed, retried: s.retried, interrupted }));
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
  output.event("delivery", { line: input.line, type, userId, delivered: result.delivered, urls: result.urls });
  const c = output.color;
  for (const url of result.urls) {
    const ok = url.status !== null && url.status >= 200 && url.status < 300;
    const mark = ok ? c.green("✓") : result.interrupted ? c.yellow("!") : c.red("✗");
    const status = url.status === null ? "---" : String(url.status);
    const attempts = `${url.attempts} attempt${url.attempts === 1 ? "" : "s"}`;
    const verdict = ok ? "delivered" : result.interrupted ? "interrupted" : result.delivered ? "not retried (delivered elsewhere)" : "failed";
    const why = !ok && url.error ? `: ${url.error}` : "";
    output.line(
      `${mark} ${input.where} ${type}${userId !== null ? ` ${userId}` : ""} → ${url.url} ${status} ${verdict}, ${attempts}, ${formatDuration(url.ms)}${why}`,
    );
  }
}
