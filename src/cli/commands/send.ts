import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { InputError, UsageError } from "../../errors.js";
import { DeliveryEngine } from "../../delivery/deliver.js";
import type { AttemptEvent, DeliveryResult, PreparedRequest } from "../../delivery/types.js";
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

  let spinner: Spinner | undefined;
  const stopSpinner = (): void => {
    spinner?.stop();
    spinner = undefined;
  };
  const engine = new DeliveryEngine(settings, {
    ...engineOptions,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    onAttempt: (event) => {
      stopSpinner();
      if (options.verbose) logAttempt(output, event);
      logFailedAttempt(output, event);
      if (event.retryInMs !== undefined) spinner = output.spinner(`waiting ${formatDuration(event.retryInMs)} to retry ${event.url}`);
    },
  });

  try {
    if (options.dryRun) {
      for (const input of messages) {
        const body = JSON.stringify(input.message);
        for (const target of settings.targets) printDryRun(output, input, engine.prepare(body, target));
      }
      return 0;
    }

    let delivered = 0;
    let failed = 0;
    let interrupted = false;
    let sent = 0;
    for (const input of messages) {
      if (io.signal.aborted) {
        interrupted = true;
        break;
      }
      const result = await engine.deliver(JSON.stringify(input.message), { signal: io.signal });
      stopSpinner();
      sent += 1;
      report(output, input, result);
      if (result.interrupted) {
        interrupted = true;
        break;
      }
      if (result.delivered) delivered += 1;
      else failed += 1;
    }
    const notDelivered = messages.length - delivered - failed;
    output.event("summary", { messages: messages.length, delivered, failed, notDelivered, interrupted });
    const summary = `${messages.length} message${messages.length === 1 ? "" : "s"}: ${delivered} delivered, ${failed} failed`;
    if (interrupted) {
      output.line(`${summary}, ${notDelivered} not delivered (interrupted)`);
      output.log(`interrupted: ${notDelivered} message${notDelivered === 1 ? " was" : "s were"} not delivered (${messages.length - sent} not sent)`);
      return interruptedExitCode(io.signal);
    }
    output.line(summary);
    return failed > 0 ? 1 : 0;
  } finally {
    stopSpinner();
    await engine.close();
  }
}

function checkCombination(options: SendOptions): void {
  if (options.file !== undefined && options.type !== undefined) {
    throw new UsageError("give either a FILE (or - for stdin) or --type, not both", { flag: "--type" });
  }
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
    return [{ message, line: 1, where: "--type" }];
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
  const parsed = parseMessages(text, file === "-" ? "stdin" : file);
  for (const warning of parsed.warnings) output.warn(warning);
  return parsed.messages;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

function report(output: Output, input: InputMessage, result: DeliveryResult): void {
  const type = input.message.type;
  const userId = userIdOf(input.message as unknown as Record<string, unknown>) ?? null;
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
