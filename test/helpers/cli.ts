import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/webhook-cli.js", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
}

/** Runs the built CLI as a child process (not a TTY: plain output) and collects its output. */
export function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, options);
  if (options.input !== undefined) child.stdin?.end(options.input);
  else child.stdin?.end();
  return collect(child, options.timeoutMs ?? 20_000);
}

/** Starts the CLI and leaves it running; use `waitForLine` and `collect`. */
export function spawnCli(args: string[], options: RunOptions = {}): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { ...process.env, NO_COLOR: "1", CI: "1", WEBHOOK_SECRET: undefined, ...options.env } as NodeJS.ProcessEnv,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

export function collect(child: ChildProcess, timeoutMs = 20_000): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`CLI did not exit within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Resolves with the first stdout line matching `pattern` (e.g. /Listening on (\S+)/). */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 10_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms: ${buffer}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = buffer.match(pattern);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        resolve(match);
      }
    };
    child.stdout?.on("data", onData);
  });
}
