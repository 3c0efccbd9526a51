import { randomBytes } from "node:crypto";
import { functionTarget } from "../../../config/destination.js";
import { DEFAULT_USER_AGENT } from "../../../config/destination.js";
import type { DeliveryResult } from "../../../delivery/types.js";
import { undiciEngine } from "../../../delivery/undici-engine.js";
import { dispatch } from "../../../dispatch/dispatcher.js";
import { batchingFor } from "../../../dispatch/units.js";
import { readSettings } from "../../../functions/settings.js";
import { MESSAGE_TYPES, type Message } from "../../../messages/schemas.js";
import type { ReceivedRequest } from "../../../receiver/received-request.js";
import { startReceiver } from "../../../receiver/server.js";
import { printable } from "../../../safe-text/printable.js";
import { formatDuration } from "../../../util/duration.js";
import { functionEngineOptions, openDestinationFunctions, runSignal, type DestinationFunctions } from "../../shared/functions.js";
import { detailLines, functionVerdict, urlJson } from "../../terminal/invocation-lines.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { type DemoEntry, type DemoOptions, demoEntries } from "./index.js";

/**
 * `demo --function FILE` (docs/commands/demo.md#a-destination-function): one example of each
 * message type through the destination function, as `send --function` delivers it, its requests
 * sent to a receiver started here (signed with a fresh secret), each shown verified. 0 when none
 * failed (a skipped one is no failure).
 */
export async function demoFunction(options: DemoOptions & { function: string }, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json });
  const settingsValue = options.settings !== undefined ? readSettings(options.settings, io.cwd, "--settings") : {};
  const secret = randomBytes(24).toString("base64url");
  const arrived: ReceivedRequest[] = [];
  const receiver = await startReceiver({ host: "127.0.0.1", port: 0, secret, onRequest: (request) => arrived.push(request) });
  let functions: DestinationFunctions | undefined;
  try {
    const settings = { targets: [functionTarget(options.function, io.cwd, settingsValue)], secret: undefined, secrets: [], userAgent: DEFAULT_USER_AGENT };
    functions = await openDestinationFunctions(
      { ...settings, aliasKeys: options.aliasKeys, enabled: true, sources: [] },
      {
        cwd: io.cwd,
        egress: { url: new URL(`${receiver.url}/egress`), secret },
      },
    );
    announce(output, receiver.url, options.function);
    const counts = await deliverExamples(output, options, functions as DestinationFunctions, arrived, io.signal);
    const setup = functions?.setupError();
    if (setup !== undefined) throw setup;
    const code = counts.interrupted ? interruptedExitCode(io.signal) : counts.failed > 0 ? 1 : 0;
    output.event("summary", { sent: MESSAGE_TYPES.length, delivered: counts.delivered, skipped: counts.skipped, failed: counts.failed, exitCode: code });
    output.line(`\n${MESSAGE_TYPES.length} messages: ${counts.delivered} delivered, ${counts.skipped} skipped, ${counts.failed} failed`);
    return code;
  } finally {
    await functions?.close();
    await receiver.close();
  }
}

function announce(output: Output, url: string, file: string): void {
  if (output.json) output.event("listening", { url, function: file });
  else {
    output.line(`Listening on ${url} for the function's requests (a demo receiver with a fresh random secret)`);
    output.line(`Sending one message of each type to ${file}:\n`);
  }
}

async function deliverExamples(
  output: Output,
  options: DemoOptions,
  functions: DestinationFunctions,
  arrived: ReceivedRequest[],
  signal: AbortSignal,
): Promise<{ delivered: number; skipped: number; failed: number; interrupted: boolean }> {
  const engine = undiciEngine({ ...functions.settings, secret: undefined }, { retryWindowMs: 5_000, ...functionEngineOptions(functions) });
  let before = 0;
  try {
    const summary = await dispatch<DemoEntry>({
      source: demoEntries(options),
      engine,
      batching: batchingFor(functions.settings),
      concurrency: 1,
      signal: runSignal(signal, functions),
      hooks: {
        onStart: () => {
          before = arrived.length;
        },
        onResult: (entry, result) => showResult(output, options, entry.message, result, arrived.slice(before)),
      },
    });
    return { delivered: summary.delivered, skipped: summary.skipped, failed: summary.failed, interrupted: summary.stopped };
  } finally {
    await engine.close();
  }
}

/** One message's line, what the function did, and each of its requests as the receiver verified it. */
function showResult(output: Output, options: DemoOptions, message: Message, result: DeliveryResult, requests: readonly ReceivedRequest[]): void {
  const url = result.urls[0];
  if (url === undefined) return;
  const verified = requests.map((request) => ({ method: request.method, path: request.path, signatureValid: request.verdict.signatureValid }));
  if (options.json) {
    output.event("delivery", {
      type: message.type,
      delivered: result.delivered,
      ...(result.skipped ? { skipped: true } : {}),
      urls: [urlJson(url)],
      requests: verified,
    });
    return;
  }
  const c = output.color;
  const mark = result.delivered ? c.green("✓") : result.skipped ? c.dim("-") : result.interrupted ? c.yellow("!") : c.red("✗");
  output.line(`${mark} ${message.type} → ${functionVerdict(url, result.interrupted)} (${formatDuration(url.ms)})`);
  for (const line of url.invocation ? detailLines(url.invocation) : []) output.line(`    ${line}`);
  for (const request of verified) {
    const signature = request.signatureValid === true ? c.green("X-Signature verified") : c.red("X-Signature NOT verified");
    output.line(`    arrived: ${request.method} ${printable(request.path)}, ${signature}`);
  }
  if (options.verbose) output.line(`    event: ${JSON.stringify(message)}`);
}
