import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { InputError, UsageError } from "../../errors.js";
import type { AttemptEvent, DeliveryResult, PreparedRequest } from "../../delivery/types.js";
import { undiciEngine } from "../../delivery/wire.js";
import { dispatch, type DispatchEntry, type DispatchSummary, type MessageHooks } from "../../dispatch/dispatcher.js";
import { userIdOf } from "../../messages/check.js";
import { exampleMessage, type ExampleOptions } from "../../messages/examples.js";
import { parseMessages, type InputMessage } from "../../messages/input.js";
import { MESSAGE_TYPES, type AliasKeys, type MessageType } from "../../messages/schemas.js";
import type { Clock, Random } from "../../util/clock.js";
import { formatDuration } from "../../util/duration.js";
import { logFailedAttempt, resolveDeliveryOptions } from "../delivery-options.js";
import { interruptedExitCode, type CliIo } from "../io.js";
import { EXAMPLE_FLAGS } from "../options/example.js";
import type { SendFlags } from "../options/send.js";
import { createOutput, type Output, type Spinner } from "../output.js";

/** With `type`, the example's overrides are those of `generate`. */
export type SendOptions = SendFlags & {
  /** A file, `-` for stdin; or use `type`. */
  file?: string;
};

/** Injected in tests; the CLI uses the system clock and Math.random. */
export interface SendDependencies {
  clock?: Clock;
  random?: Random;
}

// Header values that are credentials of their own: shown redacted, like recordings do.
const REDACTED_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

/**
 * Signs and delivers messages in input order, one at a time, through the
 * delivery engine. Everything is validated before the first request; returns
 * 0 when all were delivered, 1 when any failed, 130/143 when interrupted.
 */
export async function send(options: SendOptions, io: CliIo, deps: SendDependencies = {}): Promise<number> {
  const output = createOutput(io, { json: options.json ?? false });
  checkCombination(options);
  const { settings, engineOptions } = resolveDeliveryOptions(options, io, {
    requireTargets: true,
    ...(options.aliasKeys !== undefined ? { aliasKeys: options.aliasKeys } : {}),
  });
  const messages = await readInput(options, io, settings.aliasKeys, output);

  const engine = undiciEngine(settings, {
    ...engineOptions,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.random ? { random: deps.random } : {}),
  });
  const reporter = new SendReporter(output, options.verbose === true);
  try {
    if (options.dryRun) {
      for (const input of messages) {
        const body = input.body;
        for (const target of settings.targets) printDryRun(output, input, engine.prepare(body, target));
      }
      return 0;
    }
    const summary = await dispatch<SendEntry>({
      // In input order, one at a time.
      source: messages.map((input, i) => ({ line: i + 1, orderKey: undefined, body: input.body, time: undefined, input })),
      engine,
      concurrency: 1,
      signal: io.signal,
      hooks: reporter.hooks,
    });
    return printSummary(output, messages.length, summary, io.signal);
  } finally {
    reporter.stopSpinner();
    await engine.close();
  }
}

interface SendEntry extends DispatchEntry {
  input: InputMessage;
}

/** Per message: the spinner while a retry waits, --verbose attempts, failed attempts, the result line. */
class SendReporter {
  private spinner: Spinner | undefined;
  readonly hooks: MessageHooks<SendEntry>;

  constructor(
    private readonly output: Output,
    verbose: boolean,
  ) {
    this.hooks = {
      keepResponse: verbose,
      onAttempt: (_entry, event) => {
        this.stopSpinner();
        if (verbose) logAttempt(output, event);
        logFailedAttempt(output, event);
        if (event.retryInMs !== undefined) this.spinner = output.spinner(`waiting ${formatDuration(event.retryInMs)} to retry ${event.url}`);
      },
      onResult: (entry, result) => {
        this.stopSpinner();
        report(output, entry.input, result);
      },
    };
  }

  stopSpinner(): void {
    this.spinner?.stop();
    this.spinner = undefined;
  }
}

function printSummary(output: Output, total: number, s: DispatchSummary, signal: AbortSignal): number {
  const { delivered, failed } = s;
  const interrupted = s.stopped;
  const notDelivered = total - delivered - failed;
  output.event("summary", { messages: total, delivered, failed, notDelivered, interrupted });
  const summary = `${total} message${total === 1 ? "" : "s"}: ${delivered} delivered, ${failed} failed`;
  if (interrupted) {
    output.line(`${summary}, ${notDelivered} not delivered (interrupted)`);
    output.log(`interrupted: ${notDelivered} message${notDelivered === 1 ? " was" : "s were"} not delivered (${total - s.sent} not sent)`);
    return interruptedExitCode(signal);
  }
  output.line(summary);
  return failed > 0 ? 1 : 0;
}

function checkCombination(options: SendOptions): void {
  if (options.file !== undefined && options.type !== undefined) {
    throw new UsageError("give either a FILE (or - for stdin) or --type, not both", { flag: "--type" });
  }
  if (options.raw && options.type !== undefined) throw new UsageError("--raw sends a FILE's bodies as read; --type builds a valid message", { flag: "--raw" });
  if (options.file === undefined && options.type === undefined) {
    throw new UsageError("nothing to send: give a FILE, - for standard input, or --type TYPE", { flag: "[FILE]" });
  }
  if (options.type === undefined) {
    for (const { key, flag } of EXAMPLE_FLAGS) {
      if (options[key] !== undefined) throw new UsageError(`${flag} applies to the message generated with --type`, { flag });
    }
  }
}

async function readInput(options: SendOptions, io: CliIo, keys: AliasKeys, output: Output): Promise<InputMessage[]> {
  if (options.type !== undefined) {
    const message = exampleMessage(options.type, { ...options, aliasKeys: keys });
    return [{ message, body: JSON.stringify(message), line: 1, where: "--type" }];
  }
  const file = options.file as string;
  let text: string;
  if (file === "-") {
    text = await readStream(io.stdin);
  } else {
    try {
      text = readFileSync(resolve(io.cwd, file), "utf8");
    } catch (error) {
      throw new InputError(`cannot read: ${(error as Error).message}`, { file });
    }
  }
  const parsed = parseMessages(text, file === "-" ? "stdin" : file, { raw: options.raw === true });
  for (const warning of parsed.warnings) output.warn(warning);
  return parsed.messages;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
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
    output.line(`${mark} ${input.where} ${type}${userId !== null ? ` ${userId}` : ""} → ${url.url} ${status} ${verdict}, ${attempts}, ${formatDuration(url.ms)}${why}`);
  }
}

function headerLines(headers: Record<string, string>): string[] {
  return Object.entries(headers).map(([name, value]) => `${name}: ${REDACTED_HEADERS.has(name.toLowerCase()) ? "[redacted]" : value}`);
}

function printDryRun(output: Output, input: InputMessage, request: PreparedRequest): void {
  if (output.json) {
    output.event("request", {
      line: input.line,
      url: request.url,
      method: request.method,
      headers: Object.fromEntries(headerLines(request.headers).map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)])),
      body: request.body.toString("utf8"),
    });
    return;
  }
  output.line(`# ${input.where} → ${request.url}`);
  output.line(`${request.method} ${request.url}`);
  for (const line of headerLines(request.headers)) output.line(line);
  output.line("");
  output.line(request.body.toString("utf8"));
  output.line("");
}

function logAttempt(output: Output, event: AttemptEvent): void {
  const { request } = event;
  output.log(`> ${request.method} ${request.url} (attempt ${event.attempt})`);
  for (const line of headerLines(request.headers)) output.log(`> ${line}`);
  output.log(`> ${request.body.toString("utf8")}`);
  if (event.response && event.status !== null) {
    output.log(`< ${event.status} (${formatDuration(event.ms)})`);
    for (const [name, value] of Object.entries(event.response.headers)) output.log(`< ${name}: ${Array.isArray(value) ? value.join(", ") : value}`);
    if (event.response.body !== "") output.log(`< ${event.response.body}`);
  } else {
    output.log(`< no response (${formatDuration(event.ms)}): ${event.error ?? ""}`);
  }
}
