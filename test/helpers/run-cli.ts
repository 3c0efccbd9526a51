import { PassThrough } from "node:stream";
import { main } from "../../src/cli/program.js";
import type { CliIo } from "../../src/cli/io.js";

/**
 * Runs a command line through the real command table in this process, with
 * the CliIo seam instead of a child process: as the built CLI would, but
 * without a Node.js start-up per test. A small smoke set still spawns the
 * binary (test/helpers/cli.ts).
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

export interface InProcessRun {
  /** The exit status main() returned. */
  readonly code: Promise<number>;
  stdout(): string;
  stderr(): string;
  /** Standard input, for a command that reads it as it goes. */
  readonly stdin: PassThrough;
  /** Delivers SIGINT or SIGTERM, as bin/ does on a signal. */
  stop(signal?: "SIGINT" | "SIGTERM"): void;
  /** Resolves with the first match of `pattern` in stdout (e.g. /Listening on (\S+)/). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function startInProcess(args: readonly string[], options: InProcessOptions = {}): InProcessRun {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  let out = "";
  let err = "";
  const watchers = new Set<() => void>();
  stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    for (const watcher of watchers) watcher();
  });
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  if (options.input !== undefined) stdin.end(options.input);
  const controller = new AbortController();
  const io: CliIo = {
    stdout,
    stderr,
    stdin,
    env: { NO_COLOR: "1", CI: "1", ...options.env } as NodeJS.ProcessEnv,
    cwd: options.cwd ?? process.cwd(),
    stdoutIsTTY: options.stdoutIsTTY ?? false,
    stderrIsTTY: options.stderrIsTTY ?? false,
    stdinIsTTY: options.stdinIsTTY ?? false,
    signal: controller.signal,
  };
  return {
    code: main(args, io),
    stdout: () => out,
    stderr: () => err,
    stdin,
    stop: (signal = "SIGTERM") => controller.abort(signal),
    waitFor(pattern, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const match = out.match(pattern);
          if (!match) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve(match);
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`no stdout matching ${pattern} within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`));
        }, timeoutMs);
        watchers.add(check);
        check();
      });
    },
  };
}

/** Runs a command to its end; standard input is `input`, or empty. */
export async function runInProcess(args: readonly string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const run = startInProcess(args, { input: "", ...options });
  const code = await run.code;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}
