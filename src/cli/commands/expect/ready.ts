import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../../../errors.js";
import { controlAnswers } from "../../../control/probe.js";
import { formatDuration } from "../../../util/duration.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import { createOutput } from "../../terminal/output.js";
import { fromHref, fromIsUrl, readyLines } from "./from.js";
import type { ExpectFlags } from "./options.js";
import { cannotRead } from "../../../util/readable-file.js";

/** How often the ready file is looked for: listen is up in a few hundred milliseconds. */
const LOOK_EVERY_MS = 50;
/** How long one look at the control API may take. */
const PROBE_MS = 1_000;
/** A ready file holds two URLs; anything much larger is not one. */
const MAX_READY_FILE_BYTES = 4 * 1024;

/** The flags that say what to count: `--ready` counts nothing. */
const FILTERS = [
  ["type", "--type"],
  ["event", "--event"],
  ["userId", "--user-id"],
  ["path", "--path"],
  ["method", "--method"],
  ["kind", "--kind"],
  ["since", "--since"],
] as const;

/**
 * `expect --ready` (docs/commands/expect.md#waiting-for-listen): waits until the listen started
 * with `--ready-file FILE` is listening (the file written and its control API answering, so a
 * file left by an earlier run does not count), then exits 0. Exit 2 when `--timeout` passes
 * first, or at once when the `--pid` process exited: listen has printed why.
 */
export async function waitForListen(options: ExpectFlags, io: CliIo): Promise<number> {
  for (const [key, flag] of FILTERS) {
    if (options[key] !== undefined) throw new UsageError(`--ready waits for listen to be listening; it counts no requests (drop ${flag})`, { flag });
  }
  const output = createOutput(io, { json: options.json });
  const deadline = Date.now() + options.timeoutMs;
  let urls: ReadyUrls | undefined;
  for (;;) {
    if (io.signal.aborted) return interruptedExitCode(io.signal);
    urls = readyUrls(options.from, io.cwd);
    if (urls !== undefined && (await controlAnswers(urls.control, io.signal, PROBE_MS))) break;
    if (io.signal.aborted) return interruptedExitCode(io.signal);
    if (options.pid !== undefined && !isRunning(options.pid)) {
      throw new UsageError(`listen (pid ${options.pid}) exited before it was ready: its own error above says why`, { flag: "--pid" });
    }
    if (Date.now() >= deadline) throw notReady(options, urls);
    await pause(Math.min(LOOK_EVERY_MS, Math.max(0, deadline - Date.now())), io.signal);
  }
  output.event("ready", { url: urls.url ?? null, control: urls.control });
  output.line(`✓ listen is ready: ${urls.url ?? urls.control}${urls.url !== undefined ? ` (control API ${urls.control})` : ""}`);
  return 0;
}

interface ReadyUrls {
  /** The webhook URL (line 1 of the ready file); unknown when `--from` is the control URL. */
  url?: string;
  control: string;
}

/** The URLs `--from` names, or undefined while listen has not written its ready file. */
function readyUrls(from: string, cwd: string): ReadyUrls | undefined {
  if (fromIsUrl(from)) return { control: fromHref(from, { flag: "--from" }) };
  const path = resolve(cwd, from);
  let text: string;
  try {
    const stat = statSync(path);
    // A pipe or a device would block the read, and never is a ready file.
    if (!stat.isFile()) throw new UsageError("not a regular file: give the file listen --ready-file writes", { flag: "--from", file: from });
    if (stat.size > MAX_READY_FILE_BYTES)
      throw new UsageError(`over ${MAX_READY_FILE_BYTES} bytes: not a file listen --ready-file wrote`, { flag: "--from", file: from });
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if (error instanceof UsageError) throw error;
    throw cannotRead(error, { flag: "--from", file: from });
  }
  // listen writes the file whole (renamed into place): one without line 2 is not listen's (serve writes one URL).
  const { url, control } = readyLines(text);
  if (control === "") throw new UsageError("no control API URL on line 2: give the file listen --ready-file writes", { flag: "--from", file: from });
  return {
    url: fromHref(url, { flag: "--from", file: from, line: 1 }),
    control: fromHref(control, { flag: "--from", file: from, line: 2 }),
  };
}

function notReady(options: ExpectFlags, urls: ReadyUrls | undefined): UsageError {
  const waited = formatDuration(options.timeoutMs);
  if (urls === undefined)
    return new UsageError(`not written within ${waited}: is listen running with --ready-file ${options.from}?`, { flag: "--from", file: options.from });
  const where = fromIsUrl(options.from) ? urls.control : `${urls.control} (line 2 of ${options.from})`;
  return new UsageError(`${where} does not answer after ${waited}: is listen running? (a ready file left by an earlier listen names a closed port)`, {
    flag: "--from",
  });
}

/** Whether process `pid` is still there (EPERM: it is, but another user's); an exited one its shell has not reaped yet is not. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // Linux: state Z (zombie) follows the ")" that ends the command name in /proc/PID/stat.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    signal.addEventListener("abort", finish, { once: true });
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      done();
    }
  });
}
