import { isUtf8 } from "node:buffer";
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { InputError, UsageError } from "../../errors.js";
import { DeliveryEngine } from "../../delivery/deliver.js";
import type { AttemptEvent, DeliveryResult, PreparedRequest } from "../../delivery/types.js";
import { userIdOf } from "../../messages/check.js";
import { exampleMessage, type ExampleOptions } from "../../messages/examples.js";
import { parseMessages, type InputMessage } from "../../messages/input.js";
import { MESSAGE_TYPES, type AliasKeys, type MessageType } from "../../messages/schemas.js";
import type { Clock, Random } from "../../util/clock.js";
import { formatDuration } from "../../util/duration.js";
import { addDeliveryOptions, deliveryOptionsShape, logFailedAttempt, resolveDeliveryOptions, withDeliveryFlags, type DeliveryFlags } from "../delivery-options.js";
import { interruptedExitCode, type CliIo, type CommandContext } from "../io.js";
import { addExampleOptions, EXAMPLE_FLAGS, exampleOptionsShape } from "../example-options.js";
import { aliasKeys, messageType, parseOptions, stripUndefined } from "../options.js";
import { createOutput, type Output, type Spinner } from "../output.js";
import { isCredentialHeader, REDACTED } from "../../util/redact.js";

/** With `type`, the example's overrides are those of `generate`. */
export interface SendOptions extends DeliveryFlags, Omit<ExampleOptions, "aliasKeys"> {
  /** A file, `-` for stdin; or use `type`. */
  file?: string;
  type?: MessageType;
  aliasKeys?: AliasKeys;
  dryRun?: boolean;
  verbose?: boolean;
  json?: boolean;
}

/** Injected in tests; the CLI uses the system clock and Math.random. */
export interface SendDependencies {
  clock?: Clock;
  random?: Random;
}


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
  output.maskSecret(settings.secret);
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
  const name = file === "-" ? "stdin" : file;
  const bytes = file === "-" ? await readStream(io.stdin, name) : readInputFile(resolve(io.cwd, file), file);
  const parsed = parseMessages(decodeUtf8(bytes, name), name);
  for (const warning of parsed.warnings) output.warn(warning);
  return parsed.messages;
}

/** send holds its whole input in memory; past this, replay (which streams) is the tool. */
export const MAX_SEND_INPUT_BYTES = 64 * 1024 * 1024;
const TOO_LARGE = `the input is over ${MAX_SEND_INPUT_BYTES / 1024 / 1024} MiB: send reads it whole; use replay, which streams NDJSON`;

function readInputFile(path: string, file: string): Buffer {
  try {
    if (statSync(path).size > MAX_SEND_INPUT_BYTES) throw new InputError(TOO_LARGE, { file });
    return readFileSync(path);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read: ${(error as Error).message}`, { file });
  }
}

async function readStream(stream: NodeJS.ReadableStream, file: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > MAX_SEND_INPUT_BYTES) throw new InputError(TOO_LARGE, { file });
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/** The input as text, refused (naming the first bad line) when it is not UTF-8, as replay does: nothing is re-encoded. */
function decodeUtf8(bytes: Buffer, file: string): string {
  if (isUtf8(bytes)) return bytes.toString("utf8");
  let start = 0;
  for (let line = 1; start <= bytes.length; line++) {
    const found = bytes.indexOf(0x0a, start);
    const end = found === -1 ? bytes.length : found;
    if (!isUtf8(bytes.subarray(start, end))) throw new InputError("not valid UTF-8; nothing was sent", { file, line });
    start = end + 1;
  }
  throw new InputError("not valid UTF-8; nothing was sent", { file });
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
  return Object.entries(headers).map(([name, value]) => `${name}: ${isCredentialHeader(name) ? REDACTED : value}`);
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

const rawSchema = z.object({
  // Before the delivery flags: a bad --type is reported first, as before.
  type: messageType("--type").optional(),
  ...deliveryOptionsShape,
  aliasKeys: aliasKeys.optional(),
  ...exampleOptionsShape,
  dryRun: z.boolean().optional(),
  verbose: z.boolean().optional(),
  json: z.boolean().optional(),
});

export function registerSend(program: Command, context: CommandContext): void {
  const command = program
    .command("send")
    .description("sign and deliver messages, in order, like the Webhooks destination (a JSON object, a JSON array, or NDJSON; or --type)")
    .argument("[file]", "messages to send: a file, or - for standard input");
  addDeliveryOptions(command)
    .option("--type <type>", `send one generated example: ${MESSAGE_TYPES.join(", ")}`)
    .option("--alias-keys <style>", "alias keys of --type alias: spec or camel");
  addExampleOptions(command, "with --type: ")
    .option("--dry-run", "print the exact requests (headers, signature, body); send nothing")
    .option("--verbose", "show each attempt's request and response (stderr)")
    .option("--json", "one JSON object per message on stdout, then a summary")
    .addHelpText(
      "after",
      "\nExamples:\n  $ webhook-cli send --type track --url http://127.0.0.1:8080/hook --secret s3cret\n  $ webhook-cli generate | webhook-cli send - --url https://example.com/hook --retry-window 30s --json",
    )
    .action(async (file: string | undefined, raw: Record<string, unknown>) => {
      const parsed = withDeliveryFlags(stripUndefined(parseOptions(rawSchema, raw)));
      context.exitCode = await send({ ...parsed, ...(file !== undefined ? { file } : {}) }, context.io);
    });
}
