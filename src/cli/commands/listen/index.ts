import { resolve } from "node:path";
import { ArrivalLog } from "../../../control/arrival-log.js";
import { ControlApi } from "../../../control/api.js";
import { sendJson } from "../../../http/loopback-api.js";
import type { Inspection } from "../../../inspector/inspection.js";
import { AnswerPlan } from "../../../receiver/answer-plan.js";
import { createRouter, hasRoutes, parseForwardRoutes, type ForwardRoutes, type Router } from "../../../receiver/forward-routes.js";
import { RecordingFile } from "../../../receiver/record.js";
import { startReceiver, type Receiver } from "../../../receiver/server.js";
import { countNotReachedCase, writeJunitFile } from "../../../report/junit.js";
import { seededRandom } from "../../../util/clock.js";
import { formatDuration } from "../../../util/duration.js";
import type { CliIo } from "../../terminal/io.js";
import { readTlsFiles } from "../../shared/tls-files.js";
import { onceEach } from "../../shared/once-each.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { writeReadyFile } from "../../shared/ready-file.js";
import { receiverChecker, warnUnsigned } from "../../shared/secret.js";
import type { SignatureChecker, SignatureSettings } from "../../../receiver/signature-check.js";
import { scriptedAnswersOf } from "./scripted-answers.js";
import { createInspection, serveControl, type ControlPort } from "./inspection.js";
import { watchKeys } from "./keys.js";
import type { ListenFlags } from "./options.js";
import { stopSwitch, untilStopped, type StopReason, type StopSwitch } from "./stop.js";
import { Tally } from "./tally.js";

export type ListenOptions = ListenFlags;

/**
 * The verifying receiver (docs/receiver.md, docs/exit-codes.md#per-command): runs until --count requests,
 * --exit-after or a signal, then prints a summary. 0 when every request was
 * valid, 1 otherwise or when --exit-after came before --count.
 */
export async function listen(options: ListenOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json });
  const tls = readTlsFiles(options, io.cwd);
  const checker = receiverChecker(options, io, tls !== undefined);
  const signing = checker.settings;
  const scriptedAnswers = scriptedAnswersOf(options, io.cwd);
  const routes = parseForwardRoutes(options.forwardTo ?? []);
  const router = hasRoutes(routes) ? createRouter(routes, { timeoutMs: options.forwardTimeoutMs }) : undefined;
  const recording = options.record !== undefined ? RecordingFile.open(resolve(io.cwd, options.record)) : undefined;
  const stopper = stopSwitch();
  const tally = new Tally(options, io, output, signing.secrets);
  const inspection = createInspection(options, io, signing, router?.shown, output);
  // Every request in brief, for the control API and `expect` (docs/receiver.md#control-api).
  const arrivals = new ArrivalLog();
  const api = new ControlApi(arrivals, sendJson);
  const receiver = await openReceiver(options, output, { checker, tls, scriptedAnswers, recording, router, tally, inspection, arrivals, stopper });
  inspection?.setReceiverUrl(receiver.url);
  const control = await serveControl(inspection, options, api, [receiver, router], recording);
  const stopKeys = announceReady(options, io, output, { receiver, routes: router?.shown, control, inspection, signing });
  tally.startSpinner();

  const reason = await untilStopped(stopper, options.exitAfterMs, io.signal);
  stopKeys?.();
  await receiver.close();
  // Waits still held are answered with the final counts.
  api.close();
  await Promise.all([control.close(), inspection?.close(), router?.close()]);
  recording?.close();
  tally.finish();
  return summarize(options, io, output, tally, reason);
}

/** What listen's receiver is given, and what each request it takes is told to. */
interface ReceiverParts {
  checker: SignatureChecker;
  tls: ReturnType<typeof readTlsFiles>;
  scriptedAnswers: ReturnType<typeof scriptedAnswersOf>;
  recording: RecordingFile | undefined;
  router: Router | undefined;
  tally: Tally;
  inspection: Inspection | undefined;
  arrivals: ArrivalLog;
  stopper: StopSwitch;
}

/** Starts the receiver; when it cannot start, what listen opened for it (the recording, the router) is closed first. */
async function openReceiver(options: ListenOptions, output: Output, parts: ReceiverParts): Promise<Receiver> {
  const { checker, tls, scriptedAnswers, recording, router, tally, inspection, arrivals, stopper } = parts;
  let receiver: Receiver;
  try {
    receiver = await startReceiver({
      host: options.host,
      port: options.port,
      checker,
      strict: options.strict,
      answerPlan: answerPlanOf(options),
      scriptedAnswers,
      tls,
      recording,
      route: router?.route,
      maxConnections: options.maxConnections,
      health: () => tally.health(),
      onError: onceEach((message) => output.warn(`a request could not be handled or recorded: ${message}`)),
      onRequest(received) {
        const request = tally.take(received);
        if (request === undefined) return;
        inspection?.add(request);
        arrivals.add(request);
        if (tally.countReached) {
          // Refuse anything after the Nth request right away; the answers in flight (--delay, the
          // app's) still go out as they would have, then listen stops. A signal meanwhile cuts them.
          void receiver.finish().then(() => stopper.stop("count"));
        }
      },
    });
  } catch (error) {
    recording?.close();
    await router?.close();
    throw error;
  }
  return receiver;
}

/** The answer plan of the fault flags; `--seed` makes `--fail-rate` repeatable. */
function answerPlanOf(options: ListenOptions): AnswerPlan {
  const { respond, failStatus, delayMs, failFirst, failRate, script } = options;
  const random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  return new AnswerPlan({ respond, failStatus, delayMs, failFirst, failRate, script, random });
}

/** Says where listen is, then offers the `r` key on a terminal; returns what stops watching the keys. */
function announceReady(
  options: ListenOptions,
  io: CliIo,
  output: Output,
  ready: { receiver: Receiver; routes: ForwardRoutes | undefined; control: ControlPort; inspection: Inspection | undefined; signing: SignatureSettings },
): (() => void) | undefined {
  const { receiver, inspection, control } = ready;
  // Line 1 stays the webhook URL (scripts read it with `head -1`); line 2 is the control API's.
  // Written first: whoever has read `Listening on` can read the file too.
  if (options.readyFile !== undefined) writeReadyFile(io.cwd, options.readyFile, [receiver.url, control.url]);
  announce(output, receiver, ready.routes, control);
  const stopKeys = inspection && io.stdinIsTTY === true ? watchKeys(io.stdin, { r: () => void inspection.resendLatest() }) : undefined;
  if (stopKeys) output.log("Press r to resend the latest request.");
  if (ready.signing.secrets.length === 0) warnUnsigned(output, "requests are accepted and marked unsigned", { config: false });
  return stopKeys;
}

/** The summary line and event, the JUnit file; the exit code. */
function summarize(options: ListenOptions, io: CliIo, output: Output, tally: Tally, reason: StopReason): number {
  const { received, invalid, paint } = tally;
  const early = reason === "exit-after" && options.count !== undefined && received < options.count;
  const earlyMessage = `--exit-after ${formatDuration(options.exitAfterMs ?? 0)} came before --count ${options.count ?? 0} requests (${received} received)`;
  if (early) output.warn(earlyMessage);
  const code = invalid > 0 || early ? 1 : 0;
  const valid = received - invalid;
  output.event("summary", { received, valid, invalid, stoppedBy: reason, exitCode: code });
  output.line(
    `Summary: ${received} request${received === 1 ? "" : "s"}, ${paint.ok(`${valid} valid`)}, ${invalid > 0 ? paint.bad(`${invalid} invalid`) : "0 invalid"}`,
  );
  if (options.junit !== undefined) {
    const cases = tally.junitCases;
    // Every reason for a non-zero exit is a failing case: an early --exit-after is one too.
    if (early) cases.push(countNotReachedCase(options.count ?? 0, options.exitAfterMs ?? 0, earlyMessage));
    writeJunitFile(io.cwd, options.junit, { name: "webhook-cli listen", cases, timestamp: new Date(), secret: tally.secret });
  }
  return code;
}

/** `Listening on` first (docs/cli.md#output-streams), then where requests are relayed, where the page and the control API are. */
function announce(output: Output, receiver: Receiver, routes: ForwardRoutes | undefined, control: ControlPort): void {
  const typed = Object.entries(routes?.byType ?? {});
  const { page } = control;
  if (output.json) {
    output.event("listening", {
      url: receiver.url,
      port: receiver.port,
      control: control.url,
      ...(page ? { inspector: page } : {}),
      ...(routes?.fallback ? { forwardTo: routes.fallback } : {}),
      ...(typed.length > 0 ? { forwardByType: routes?.byType } : {}),
    });
    output.log(`Listening on ${receiver.url}`);
  } else output.line(`Listening on ${receiver.url}`);
  for (const [type, url] of typed) output.line(`Forwarding ${type} to ${url}`);
  if (routes?.fallback) output.line(`Forwarding ${typed.length > 0 ? "the rest " : ""}to ${routes.fallback}`);
  else if (typed.length > 0) output.line("Answering the rest here: no --forward-to without a type");
  if (page) output.line(`Inspector: ${page}`);
  output.line(`Control API: ${control.url}`);
}
