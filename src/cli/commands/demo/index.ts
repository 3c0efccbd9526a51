import { randomBytes } from "node:crypto";
import { UsageError } from "../../../errors.js";
import type { DeliveryResult } from "../../../delivery/types.js";
import { undiciEngine } from "../../../delivery/undici-engine.js";
import { dispatch, type DispatchEntry } from "../../../dispatch/dispatcher.js";
import { buildExamples } from "../../../messages/examples.js";
import { MESSAGE_TYPES, type Message } from "../../../messages/schemas.js";
import type { ReceivedRequest } from "../../../receiver/received-request.js";
import { startReceiver } from "../../../receiver/server.js";
import { DEFAULT_USER_AGENT } from "../../../config/destination.js";
import { SCHEMES, type SchemeName } from "../../../signing/schemes.js";
import { formatDuration } from "../../../util/duration.js";
import type { CliIo } from "../../terminal/io.js";
import { invocation } from "../../shared/invocation.js";
import { interruptedExitCode } from "../../terminal/io.js";
import { createOutput, type Output } from "../../terminal/output.js";
import type { DemoFlags } from "./options.js";
import { painter, requestEvent, requestLines } from "../../terminal/request-lines.js";

export type DemoOptions = DemoFlags;

/**
 * Starts the receiver of `listen` on a free loopback port with a fresh random
 * secret, sends one example of every message type through the delivery engine,
 * and shows what arrived. 0 when all seven arrived verified and well-formed.
 */
export async function demo(options: DemoOptions, io: CliIo): Promise<number> {
  if (options.function !== undefined) return (await import("./function-demo.js")).demoFunction({ ...options, function: options.function }, io);
  if (options.settings !== undefined) throw new UsageError("--settings goes with --function", { flag: "--settings" });
  const output = createOutput(io, { json: options.json });
  const paint = painter(output.color);
  const { scheme } = options;
  const secret = freshSecret(scheme);
  const arrived: ReceivedRequest[] = [];
  const receiver = await startReceiver({ host: "127.0.0.1", port: 0, secret, scheme, strict: true, onRequest: (request) => arrived.push(request) });
  const url = `${receiver.url}/webhook`;
  const engine = undiciEngine({ targets: [{ url, headers: {} }], secret, scheme, userAgent: DEFAULT_USER_AGENT }, { retryWindowMs: 5_000 });

  let verified = 0;
  let interrupted = false;
  try {
    if (options.json) output.event("listening", { url: receiver.url, port: receiver.port });
    else {
      output.line(`Listening on ${receiver.url} (a demo receiver with a fresh random secret)`);
      output.line(`Sending one signed message of each type to ${url}:\n`);
    }
    const spinner = output.spinner("Sending…");
    // Requests that reached the receiver before this message (more than one arrives when retried).
    let before = 0;
    const summary = await dispatch<DemoEntry>({
      source: demoEntries(options),
      engine,
      concurrency: 1,
      signal: io.signal,
      hooks: {
        onStart: () => {
          before = arrived.length;
        },
        onResult: (entry, result) => {
          if (result.interrupted) return;
          if (showResult(output, paint, options, entry.message, result, arrived.slice(before).at(-1))) verified += 1;
        },
      },
    });
    interrupted = summary.stopped;
    spinner.stop();
  } finally {
    await engine.close();
    await receiver.close();
  }

  const total = MESSAGE_TYPES.length;
  const code = interrupted ? interruptedExitCode(io.signal) : verified === total ? 0 : 1;
  output.event("summary", { sent: total, verified, exitCode: code });
  if (!options.json) printSummary(output, paint, { verified, scheme }, code === 0 ? invocation(io.env) : undefined);
  return code;
}

/** A fresh random secret in the scheme's format (Standard Webhooks and Svix: `whsec_` and base64). */
function freshSecret(scheme: SchemeName): string {
  const bytes = randomBytes(24);
  return SCHEMES[scheme].secret === "whsec-base64" ? `whsec_${bytes.toString("base64")}` : bytes.toString("base64url");
}

/** The closing line, and with every type verified, what to run next (`command`: how webhook-cli runs here). */
function printSummary(output: Output, paint: ReturnType<typeof painter>, run: { verified: number; scheme: SchemeName }, command: string | undefined): void {
  const total = MESSAGE_TYPES.length;
  const { verified, scheme } = run;
  const how = scheme === "default" ? "HMAC-SHA1 X-Signature" : `${scheme} signatures (${SCHEMES[scheme].signature.name})`;
  output.line(
    `\n${verified === total ? paint.ok(`All ${total} message types arrived and verified`) : paint.bad(`${verified} of ${total} message types arrived verified`)} (${how} over the exact bytes, shapes checked strictly).`,
  );
  if (command === undefined) return;
  // Named as it runs here: `npx webhook-cli` in a clone or under npm, where `webhook-cli` is not found.
  output.line("\nNext: run your own receiver and send to it:");
  // The secret comes from the environment, not the command line, where `ps` would show it.
  output.line(`  export WEBHOOK_SECRET=${SCHEMES[scheme].secret === "whsec-base64" ? "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" : "s3cret"}`);
  const flag = scheme === "default" ? "" : ` --scheme ${scheme}`;
  output.line(`  ${command} listen${flag}`);
  output.line(`  ${command} send --type track --url http://127.0.0.1:8080/hook${flag}`);
}

export interface DemoEntry extends DispatchEntry {
  message: Message;
}

/** One example of every type, with what a scheme's message id and event header come from (unused by a function target, which is not signed). */
export function demoEntries(options: DemoOptions): DemoEntry[] {
  return buildExamples(MESSAGE_TYPES, { aliasKeys: options.aliasKeys }).map((message, i) => ({
    line: i + 1,
    orderKey: undefined,
    body: JSON.stringify(message),
    time: undefined,
    message,
    messageId: message.messageId,
    type: message.type,
  }));
}

/** One message's line (or JSON event); true when it arrived verified and well-formed. */
function showResult(
  output: Output,
  paint: ReturnType<typeof painter>,
  options: DemoOptions,
  message: Message,
  result: DeliveryResult,
  last: ReceivedRequest | undefined,
): boolean {
  const ok = result.delivered && last !== undefined && last.verdict.signatureValid === true && last.verdict.valid;
  const ms = result.urls[0]?.ms ?? 0;
  if (options.json) {
    output.event(
      "request",
      last ? { ...requestEvent(last), verified: ok, ms } : { type: message.type, verified: false, error: result.urls[0]?.error ?? "not delivered" },
    );
    return ok;
  }
  const mark = ok ? paint.ok("✓ verified") : paint.bad("✗ NOT verified");
  if (last) output.line(`${mark}  ${requestLines(last, paint, options.verbose)}  ${paint.dim(formatDuration(ms))}`);
  else output.line(`${mark}  ${message.type}: ${result.urls[0]?.error ?? "not delivered"}`);
  if (last && !result.delivered) output.line(`    not delivered: ${result.urls[0]?.error ?? "unknown"}`);
  return ok;
}
