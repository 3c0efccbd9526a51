import { resolve } from "node:path";
import { ConfigError, InputError, UsageError } from "../../../errors.js";
import type { Egress } from "../../../functions/fetch.js";
import { MAX_REQUEST_FILE_BYTES, parseRequestFile, type RequestFile } from "../../../functions/request-file.js";
import { requestFromPayload } from "../../../functions/request.js";
import { type FunctionModule, loadFunction } from "../../../functions/runtime.js";
import { type FunctionSettings, readSettings } from "../../../functions/settings.js";
import { isPlainObject, jsonTooDeep, parseUntrustedJson } from "../../../json/parse.js";
import { exampleMessage } from "../../../messages/examples.js";
import type { InputMessage } from "../../../messages/input.js";
import type { Clock } from "../../../util/clock.js";
import { readRegularFile } from "../../../util/readable-file.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import { readMessages } from "../../shared/message-input.js";
import { EXAMPLE_FLAGS } from "../../options/example.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { resolveSecret } from "../../../config/secret.js";
import { egressUrl } from "../../shared/functions.js";
import { checkOneSecretFlag } from "../../shared/secret.js";
import { INTERRUPTED } from "../../shared/stdin.js";
import type { FunctionRunFlags } from "./options.js";
import { InvocationReport, tallyText } from "./report.js";

export type FunctionRunOptions = FunctionRunFlags & {
  /** The function file. */
  file: string;
  /** A destination function's events: a file, or `-` for stdin. */
  events?: string | undefined;
};

/** Injected in tests: the clock of the 5 s limit and the function's timers. */
export interface FunctionRunDependencies {
  clock?: Clock;
}

/**
 * Runs a function once per event (or batch), or once on a test request, as the service runs it,
 * and prints what it did (docs/commands/function.md). Returns 0 when every invocation delivered
 * or was skipped, 1 when one failed or would be retried; a file problem is an InputError (2).
 */
export async function functionRun(options: FunctionRunOptions, io: CliIo, deps: FunctionRunDependencies = {}): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  checkCombination(options);
  const settings = options.settings !== undefined ? readSettings(options.settings, io.cwd, "--settings") : undefined;
  const egress = egressOf(options, io);
  output.maskSecret(typeof egress?.secret === "string" ? egress.secret : undefined);
  const fn = loadFunction(options.file, io.cwd, { egress, clock: deps.clock });
  const report = new InvocationReport(output, options.file);
  try {
    report.atLoad(fn.atLoad);
    if (fn.kind === "source") await runSource(fn, options, io, output, report, settings);
    else {
      const events = await readEvents(fn, options, io, output);
      if (events === INTERRUPTED) return interruptedExitCode(io.signal);
      await runDestination(fn, events, fn.batchSize(options.batchSize), settings ?? {}, report, io.signal);
    }
  } finally {
    await fn.close();
  }
  for (const thrown of fn.late)
    output.warn(
      `a promise the function rejected and did not handle, after its invocation: ${thrown.name}: ${thrown.message}${thrown.location ? ` (${thrown.location})` : ""}`,
    );
  if (report.setupProblem !== undefined) throw new ConfigError(report.setupProblem, { file: options.file });
  return summarize(output, fn.kind, report, io.signal);
}

async function runSource(
  fn: FunctionModule,
  options: FunctionRunOptions,
  io: CliIo,
  output: Output,
  report: InvocationReport,
  settings?: FunctionSettings,
): Promise<void> {
  if (options.request === undefined)
    throw new UsageError(`${options.file} is a source function (onRequest): give it a test request with --request FILE`, { flag: "--request" });
  const file = readRequestFile(options.request, io.cwd);
  for (const warning of file.warnings) output.warn(warning);
  const request = requestFromPayload(file.payload);
  report.request(request.url.href, await fn.runRequest(request, settings ?? file.settings ?? {}));
}

async function runDestination(
  fn: FunctionModule,
  events: InputMessage[],
  batchSize: number,
  settings: FunctionSettings,
  report: InvocationReport,
  signal: AbortSignal,
): Promise<void> {
  const batched = batchSize > 1 && fn.has("onBatch") && events.length > 1;
  for (let start = 0; start < events.length && !signal.aborted; start += batched ? batchSize : 1) {
    if (batched) {
      const chunk = events.slice(start, start + batchSize);
      report.batch(chunk, await fn.runBatch(chunk.map(eventOf), settings));
    } else {
      const input = events[start] as InputMessage;
      report.event(input, await fn.runEvent(eventOf(input), settings));
    }
  }
}

/** A fresh copy of the event for each invocation: a handler may change what it is given. */
function eventOf(input: InputMessage): unknown {
  return JSON.parse(input.body);
}

async function readEvents(fn: FunctionModule, options: FunctionRunOptions, io: CliIo, output: Output): Promise<InputMessage[] | typeof INTERRUPTED> {
  if (options.request !== undefined)
    throw new UsageError(`${options.file} is a destination function: give it events (a file, - or --type), not a request`, { flag: "--request" });
  if (options.type !== undefined) {
    const message = exampleMessage(options.type, options);
    return [{ message, body: JSON.stringify(message), line: 1, where: "--type" }];
  }
  if (options.events === undefined) throw new UsageError(`no events: give ${fn.file} events (a file, or - for standard input) or --type TYPE`);
  // Read as `send --raw` reads: a function takes any JSON object, as the service's Test tab does,
  // not only a complete message (hand-written events rarely carry version and timestamp).
  const read = await readMessages(options.events, io, output, {
    command: "function run",
    raw: true,
    warn: () => {},
    onEmpty: (name) => {
      throw new InputError("no events: the input is empty", { file: name });
    },
  });
  if (read !== INTERRUPTED) for (const input of read) checkEvent(input);
  return read;
}

/** An event is a JSON object (`where` names the file and line). */
function checkEvent(input: InputMessage): void {
  // readMessages sets a message only for a value it parsed and found an object.
  if (input.message !== undefined) return;
  let value: unknown;
  try {
    value = parseUntrustedJson(input.body);
  } catch (error) {
    // Past the nesting bound: say so, as send and replay do for the same line.
    const why = jsonTooDeep(input.body) ? `not JSON: ${(error as Error).message}` : "not JSON";
    throw new InputError(`${why}: an event is a JSON object`, { file: input.where });
  }
  if (!isPlainObject(value)) throw new InputError("an event is a JSON object", { file: input.where });
  // Any object is an event (see readEvents), not only a checked Message.
  input.message = value as unknown as InputMessage["message"];
}

function readRequestFile(file: string, cwd: string): RequestFile {
  return parseRequestFile(readRegularFile(resolve(cwd, file), { flag: "--request", file }, MAX_REQUEST_FILE_BYTES).toString("utf8"), file);
}

function egressOf(options: FunctionRunOptions, io: CliIo): Egress | undefined {
  if (options.egress === undefined) {
    if (options.secret !== undefined || options.secretFile !== undefined)
      throw new UsageError("the secret signs the requests sent to --function-egress: give that too", {
        flag: options.secret !== undefined ? "--secret" : "--secret-file",
      });
    return undefined;
  }
  const url = egressUrl(options.egress);
  checkOneSecretFlag(options);
  const secret = resolveSecret({ secret: options.secret, secretFile: options.secretFile, cwd: io.cwd, env: io.env });
  return { url, secret };
}

function checkCombination(options: FunctionRunOptions): void {
  if (options.events !== undefined && options.type !== undefined)
    throw new UsageError("give either EVENTS (a file, or - for stdin) or --type, not both", { flag: "--type" });
  if (options.request !== undefined && (options.events !== undefined || options.type !== undefined)) {
    throw new UsageError("--request is a source function's input; events and --type are a destination function's: give one", { flag: "--request" });
  }
  if (options.type === undefined) {
    for (const { key, flag } of EXAMPLE_FLAGS) {
      if (options[key] !== undefined) throw new UsageError(`${flag} applies to the event generated with --type`, { flag });
    }
  }
}

function summarize(output: Output, kind: FunctionModule["kind"], report: InvocationReport, signal: AbortSignal): number {
  const { delivered, skipped, failed, retry } = report.tally;
  const total = delivered + skipped + failed + retry;
  output.event("summary", { kind, invocations: total, delivered, skipped, failed, retry, interrupted: signal.aborted });
  const noun = kind === "source" ? "request" : "event";
  const success = kind === "source" ? "accepted" : "delivered";
  output.line(`${total} ${noun}${total === 1 ? "" : "s"}: ${tallyText(report.tally, success)}`);
  if (signal.aborted) return interruptedExitCode(signal);
  return failed + retry > 0 ? 1 : 0;
}
