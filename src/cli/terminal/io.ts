/** What a command may touch of its process: streams, environment and the stop signal. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** Standard input is a terminal: reading it says so, and Ctrl-C ends the wait. */
  stdinIsTTY?: boolean;
  /** Aborted on SIGINT or SIGTERM; `reason` is the signal's name. */
  signal: AbortSignal;
}

/** 130 for SIGINT, 143 for SIGTERM (docs/exit-codes.md#interruption). */
export function interruptedExitCode(signal: AbortSignal): number {
  return signal.reason === "SIGTERM" ? 143 : 130;
}

/** Handed to each command's commander registration: its I/O and where to put its exit status. */
export interface CommandContext {
  io: CliIo;
  exitCode: number;
}
