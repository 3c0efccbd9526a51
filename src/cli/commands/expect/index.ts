import { resolve } from "node:path";
import { UsageError } from "../../../errors.js";
import { pollWait, type WaitAnswer } from "../../../control/client.js";
import { arrivalsReport } from "../../../receiver/arrivals.js";
import { BODY_KINDS, describeMatch, VERDICT_FILTERS, type RequestMatch, type VerdictFilter } from "../../../receiver/match.js";
import { formatDuration, parseDuration } from "../../../util/duration.js";
import { MAX_SETTINGS_FILE_BYTES, readRegularFile } from "../../../util/readable-file.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { fromHref, fromIsUrl, readyLines } from "./from.js";
import type { ExpectFlags } from "./options.js";
import { waitForListen } from "./ready.js";

export type ExpectOptions = ExpectFlags;

/** How long to wait before asking again when listen holds as many waits as it takes. */
const BUSY_RETRY_MS = 1_000;
/**
 * How long past --timeout expect waits for listen's last answer (docs/commands/expect.md#bounds):
 * listen answers at the timeout itself, so only a control URL that does not answer (a stopped
 * listen, a server that accepts and never answers or trickles bytes) reaches it.
 */
const ANSWER_GRACE_MS = 5_000;

/**
 * Waits until a running `listen` has received at least --count requests matching the filters
 * (docs/commands/expect.md): 0 when they came in time, 1 (with what did arrive) when not, 2 for
 * bad input or a control URL that does not answer.
 */
export async function expectRequests(options: ExpectOptions, io: CliIo): Promise<number> {
  if (options.ready) return waitForListen(options, io);
  if (options.pid !== undefined) throw new UsageError("only with --ready, which watches listen's process", { flag: "--pid" });
  const output = createOutput(io, { json: options.json });
  const wait: Wait = {
    match: matchOf(options),
    since: options.since !== undefined ? sinceOf(options.since) : undefined,
    control: controlUrl(options.from, io.cwd),
  };
  const answer = await waitForAnswer(wait, options, io);
  if (answer === undefined) return interruptedExitCode(io.signal);
  return report(answer, wait, options, output);
}

/** What expect waits for, and where it asks. */
interface Wait {
  match: RequestMatch;
  /** Epoch ms, or undefined for "since listen started". */
  since: number | undefined;
  control: string;
}

/** Asks listen until the count is met, listen stops or --timeout passes; undefined when interrupted. */
async function waitForAnswer(wait: Wait, options: ExpectOptions, io: CliIo): Promise<WaitAnswer | undefined> {
  const { control } = wait;
  const deadline = Date.now() + options.timeoutMs;
  const gaveUp = AbortSignal.timeout(options.timeoutMs + ANSWER_GRACE_MS);
  const signal = AbortSignal.any([io.signal, gaveUp]);
  for (;;) {
    if (io.signal.aborted) return undefined;
    const remaining = Math.max(0, deadline - Date.now());
    const params = queryOf({ ...wait.match, count: String(options.count), timeout: String(remaining), limit: "20" });
    if (wait.since !== undefined) params.set("since", new Date(wait.since).toISOString());
    const outcome = await pollWait(control, params, signal).catch((error: unknown) => {
      if (io.signal.aborted) return undefined;
      if (gaveUp.aborted) throw new UsageError(`${control} does not answer: ${noAnswerWithin(options.timeoutMs)}: is listen stopped?`, { flag: "--from" });
      throw new UsageError(`${control} does not answer: ${reasonOf(error)}: is listen running?`, { flag: "--from" });
    });
    if (outcome === undefined) return undefined;
    if (outcome.kind === "problem") throw new UsageError(`${control}: ${outcome.message}`, { flag: "--from" });
    if (outcome.kind === "busy") {
      if (Date.now() + BUSY_RETRY_MS > deadline) throw new UsageError(`${control} holds as many waits as it takes: try again`, { flag: "--from" });
      await new Promise((done) => setTimeout(done, BUSY_RETRY_MS));
      continue;
    }
    if (outcome.answer.met || outcome.answer.stopped || Date.now() >= deadline) return outcome.answer;
  }
}

/** The `expect` event and the line saying whether the count was met (with what did arrive when not): 0 or 1. */
function report(answer: WaitAnswer, wait: Wait, options: ExpectOptions, output: Output): number {
  const wanted = `${describeMatch(wait.match, "any")}`;
  const window = wait.since !== undefined ? `since ${new Date(wait.since).toISOString()}` : "since listen started";
  output.event("expect", {
    met: answer.met,
    count: options.count,
    matched: answer.matched,
    complete: answer.complete,
    requests: answer.requests,
    window: answer.window,
  });
  if (answer.met) {
    output.line(`✓ ${answer.matched} request${answer.matched === 1 ? "" : "s"} ${window} matching ${wanted} (expected at least ${options.count})`);
    return 0;
  }
  const why = answer.stopped ? "listen stopped" : `waited ${formatDuration(options.timeoutMs)}`;
  output.line(`✗ expected at least ${options.count} request${options.count === 1 ? "" : "s"} ${window} matching ${wanted}; ${answer.matched} arrived (${why})`);
  if (!answer.complete) output.line(`  (listen's control log no longer holds ${answer.dropped} of the earliest requests: they were not counted)`);
  output.line(arrivalsReport(answer.window.recent, answer.window.received));
  return 1;
}

/** --from: the control API's URL, or listen's --ready-file (its line 2). */
function controlUrl(from: string, cwd: string): string {
  if (fromIsUrl(from)) return fromHref(from, { flag: "--from" });
  // A FIFO or a device is refused before it is opened: reading one could block or never end.
  const text = readRegularFile(resolve(cwd, from), { flag: "--from", file: from }, MAX_SETTINGS_FILE_BYTES).toString("utf8");
  const { control } = readyLines(text);
  if (control === "")
    throw new UsageError("no control API URL on line 2: give the file listen --ready-file wrote, or the URL itself", { flag: "--from", file: from });
  return fromHref(control, { flag: "--from", file: from, line: 2 });
}

function matchOf(options: ExpectOptions): RequestMatch {
  if (options.kind !== undefined && !(BODY_KINDS as readonly string[]).includes(options.kind))
    throw new UsageError(`invalid value "${options.kind}": expected one of ${BODY_KINDS.join(", ")}`, { flag: "--kind" });
  if (!(VERDICT_FILTERS as readonly string[]).includes(options.verdict))
    throw new UsageError(`invalid value "${options.verdict}": expected one of ${VERDICT_FILTERS.join(", ")}`, { flag: "--verdict" });
  if (options.method !== undefined && !/^[A-Za-z]+$/.test(options.method)) throw new UsageError(`invalid method "${options.method}"`, { flag: "--method" });
  if (options.path !== undefined && !options.path.startsWith("/")) throw new UsageError(`"${options.path}" does not start with /`, { flag: "--path" });
  return {
    type: options.type,
    event: options.event,
    userId: options.userId,
    path: options.path,
    method: options.method,
    kind: options.kind as RequestMatch["kind"],
    verdict: options.verdict as VerdictFilter,
  };
}

/** The control API's query: the filters given, a filter left out is no parameter at all. */
function queryOf(fields: Record<string, string | undefined>): URLSearchParams {
  return new URLSearchParams(Object.entries(fields).filter((field): field is [string, string] => field[1] !== undefined));
}

/** --since: an ISO 8601 date-time, or a duration ago. */
function sinceOf(value: string): number {
  if (/^\d+(\.\d+)?(ms|s|m|h)$/.test(value.trim())) return Date.now() - parseDuration(value, { flag: "--since" });
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new UsageError(`invalid time "${value}": expected ISO 8601 (2026-01-01T12:00:00Z) or a duration ago (5m)`, { flag: "--since" });
  return ms;
}

function noAnswerWithin(timeoutMs: number): string {
  return `no answer within ${formatDuration(timeoutMs + ANSWER_GRACE_MS)} (--timeout ${formatDuration(timeoutMs)} and ${formatDuration(ANSWER_GRACE_MS)} more)`;
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).code ?? (error as { cause?: { code?: unknown } }).cause?.code;
  if (code === "ECONNREFUSED") return "connection refused (ECONNREFUSED)";
  return error instanceof Error ? `${error.message}${typeof code === "string" ? ` (${code})` : ""}` : String(error);
}
