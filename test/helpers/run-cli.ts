import { PassThrough, Writable } from "node:stream";
import { onTestFinished } from "vitest";
import { main } from "../../src/cli/shell/program.js";
import type { CliIo } from "../../src/cli/terminal/io.js";

/**
 * Runs a command line through the real command table in this process, with
 * the CliIo seam instead of a child process: as the built CLI would, but
 * without a Node.js start-up per run. A small smoke set still spawns the
 * binary (test/helpers/cli.ts): what only a real process shows (the bin shim,
 * signals, TTYs, memory, the modules loaded).
 *
 * Nothing process-wide is shared with the test: the command sees only the
 * environment given here (NO_COLOR and CI set, WEBHOOK_SECRET unset unless
 * given), its own cwd, streams and stop signal. A run started inside a test
 * and still going when the test ends is stopped then (SIGTERM), and the test
 * fails if it does not end; one started in a hook is the hook's to stop.
 */
export interface InProcessOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Written to standard input, which then ends. Without it standard input stays open (stdin). */
  input?: string | Buffer;
  stdoutIsTTY?: boolean;
  stderrIsTTY?: boolean;
  stdinIsTTY?: boolean;
}

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface InProcessRun {
  /** The exit status main() returned. */
  readonly code: Promise<number>;
  /** The exit status with everything written: what a finished child process gives. */
  readonly done: Promise<InProcessResult>;
  stdout(): string;
  stderr(): string;
  /** Standard input, for a command that reads it as it goes. */
  readonly stdin: PassThrough;
  /** Delivers SIGINT or SIGTERM, as bin/ does on a signal. */
  stop(signal?: "SIGINT" | "SIGTERM"): void;
  /** Resolves with the first match of `pattern` in stdout (e.g. /Listening on (\S+)/). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The same on stderr (logs, status lines). */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

/** How long a run left going at the end of its test has to stop after SIGTERM. */
const STOP_AT_TEST_END_MS = 5_000;

/** A stream that keeps what is written, synchronously (nothing is left in a buffer when the command returns). */
function capture(onWrite: () => void): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      text += chunk.toString();
      onWrite();
      callback();
    },
  });
  return { stream, text: () => text };
}

export function startInProcess(args: readonly string[], options: InProcessOptions = {}): InProcessRun {
  const watchers = new Set<() => void>();
  const notify = (): void => {
    for (const watcher of watchers) watcher();
  };
  const stdout = capture(notify);
  const stderr = capture(notify);
  const stdin = new PassThrough();
  if (options.input !== undefined) stdin.end(options.input);
  const controller = new AbortController();
  const io: CliIo = {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin,
    env: { NO_COLOR: "1", CI: "1", ...options.env } as NodeJS.ProcessEnv,
    cwd: options.cwd ?? process.cwd(),
    stdoutIsTTY: options.stdoutIsTTY ?? false,
    stderrIsTTY: options.stderrIsTTY ?? false,
    stdinIsTTY: options.stdinIsTTY ?? false,
    signal: controller.signal,
  };
  let finished = false;
  const code = main(args, io).finally(() => (finished = true));
  const done = code.then((status) => ({ code: status, stdout: stdout.text(), stderr: stderr.text() }));
  const waitOn =
    (text: () => string, name: string) =>
    (pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const match = text().match(pattern);
          if (!match) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve(match);
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`no ${name} matching ${pattern} within ${timeoutMs} ms\nstdout: ${stdout.text()}\nstderr: ${stderr.text()}`));
        }, timeoutMs);
        watchers.add(check);
        check();
      });
  const run: InProcessRun = {
    code,
    done,
    stdout: stdout.text,
    stderr: stderr.text,
    stdin,
    stop: (signal = "SIGTERM") => controller.abort(signal),
    waitFor: waitOn(stdout.text, "stdout"),
    waitForStderr: waitOn(stderr.text, "stderr"),
  };
  stopAtTestEnd(run, () => finished, args);
  return run;
}

/** Inside a test: a run still going when the test ends is stopped, and must end (as a killed child would). */
function stopAtTestEnd(run: InProcessRun, finished: () => boolean, args: readonly string[]): void {
  try {
    onTestFinished(async () => {
      if (finished()) return;
      run.stop("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), STOP_AT_TEST_END_MS)));
      const outcome = await Promise.race([run.code, late]).finally(() => clearTimeout(timer));
      if (outcome === "late") throw new Error(`webhook-cli ${args.join(" ")}: still running ${STOP_AT_TEST_END_MS} ms after SIGTERM at the end of the test`);
    });
  } catch {
    // Started outside a test (a beforeAll): the hook that started it stops it.
  }
}

/** Runs a command to its end; standard input is `input`, or empty. */
export function runInProcess(args: readonly string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  return startInProcess(args, { input: "", ...options }).done;
}

/** The events a `--json` run wrote to stdout, one JSON object a line; only those named `event` when given. */
export function jsonEvents(stdout: string, event?: string): Record<string, unknown>[] {
  const events = stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return event === undefined ? events : events.filter((e) => e["event"] === event);
}

/**
 * A CliIo for calling a command's function directly (to inject a clock, say), or building the
 * program: stdout kept as text (`out()`), the rest discarded.
 */
export function fakeIo(options: { env?: NodeJS.ProcessEnv; isTTY?: boolean; cwd?: string } = {}): CliIo & { out: () => string } {
  let out = "";
  const stdout = new PassThrough();
  stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  return {
    stdout,
    stderr: new PassThrough(),
    stdin: new PassThrough(),
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    stdoutIsTTY: options.isTTY ?? false,
    stderrIsTTY: options.isTTY ?? false,
    signal: new AbortController().signal,
    out: () => out,
  };
}
