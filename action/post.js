// @ts-check
// The action's post step (it runs when the job ends, passed or failed): stops what main started
// with SIGTERM, its normal stop (docs/receiver.md#stopping), then writes the job summary and fails
// the job when a request was invalid or fewer than expect-count arrived.
// docs/guides/ci.md#the-github-action
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { readRun } from "./events.js";
import { appendSummary, booleanInput, countInput, echoInert, error, runStep, state } from "./runner.js";
import { failures, summaryMarkdown } from "./summary.js";

// listen and serve stop within a second of SIGTERM; past this they are killed.
const STOP_TIMEOUT_MS = 10_000;
// The command's log shown in the post step's log: its end, where the warnings and the summary are.
const MAX_LOG_BYTES = 64 * 1024;

await runStep(post);

async function post() {
  const pid = Number(state("pid"));
  const dir = state("dir");
  const command = state("command");
  if (!Number.isInteger(pid) || pid <= 0 || dir === "") {
    console.log("webhook-cli was not started by this step's main (it failed before): nothing to stop");
    return;
  }
  const events = join(dir, "events.ndjson");
  const stop = await stopProcess(pid, dir, events);
  const log = join(dir, "log.txt");
  if (existsSync(log)) {
    const { text, skipped } = tailOf(log, MAX_LOG_BYTES);
    console.log(`::group::webhook-cli ${command}'s log${skipped > 0 ? ` (its last ${MAX_LOG_BYTES / 1024} KiB)` : ""}`);
    echoInert(text);
    console.log("::endgroup::");
  }
  if (stop !== "") console.log(stop);
  const run = await readRun(events);
  const reasons = failures(run, command, { expectCount: countInput("expect-count", 1), failOnInvalid: booleanInput("fail-on-invalid", true) });
  if (booleanInput("summary", true)) appendSummary(summaryMarkdown(run, command, reasons, process.env.INPUT_SECRET ?? ""));
  for (const reason of reasons) error(reason);
  if (reasons.length > 0) process.exitCode = 1;
  else console.log(`webhook-cli ${command}: passed`);
}

/**
 * SIGTERM unless the run already ended on its own (--count, --exit-after: its summary event is
 * written, its JUnit file may still be), then waits until the process is gone (or a zombie, where
 * nothing reaps orphans: a job container without an init). Returns a note for the log, or "".
 * @param {number} pid
 * @param {string} dir this run's folder
 * @param {string} events the command's --json output
 */
async function stopProcess(pid, dir, events) {
  if (!ours(pid, dir)) return endedOnItsOwn(events) ? "" : `webhook-cli (pid ${pid}) had already ended`;
  if (!endedOnItsOwn(events)) signal(pid, "SIGTERM");
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!ours(pid, dir)) return "";
    await new Promise((done) => setTimeout(done, 50));
  }
  signal(pid, "SIGKILL");
  return `webhook-cli (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000}s: killed`;
}

/**
 * Whether the last event written is the summary (the last thing listen and serve write before they exit).
 * @param {string} events
 */
function endedOnItsOwn(events) {
  if (!existsSync(events)) return false;
  const text = tailOf(events, 4096).text.trimEnd();
  return text.slice(text.lastIndexOf("\n") + 1).startsWith('{"event":"summary"');
}

/**
 * The last `bytes` of a file, and how many came before them.
 * @param {string} file
 * @param {number} bytes
 */
function tailOf(file, bytes) {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(Math.min(size, bytes));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    return { text: tail.toString("utf8"), skipped: size - tail.length };
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether `pid` still runs and is the process main started: its command line names this run's
 * folder, where /proc tells (a zombie's is empty; a pid reused since is another command).
 * @param {number} pid
 * @param {string} dir
 */
function ours(pid, dir) {
  try {
    process.kill(pid, 0);
  } catch (problem) {
    if (/** @type {NodeJS.ErrnoException} */ (problem).code !== "EPERM") return false;
  }
  if (!existsSync("/proc/self/cmdline")) return true;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir);
  } catch {
    return false;
  }
}

/**
 * @param {number} pid
 * @param {NodeJS.Signals} signal
 */
function signal(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    // It ended meanwhile.
  }
}
