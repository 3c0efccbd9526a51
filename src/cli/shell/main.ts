import { isSea } from "node:sea";
import { relaunchPlan } from "./relaunch.js";
import { VERSION } from "./version.js";

// The process entry: the only place that reads process.argv and calls process.exit.
const argv = process.argv.slice(2);

// replay starts again with a smaller young generation where Node.js has process.execve (relaunch.ts);
// where it has not (22.13, 22.14), or may not use it, replay goes on as it is and says nothing.
const relaunch = relaunchPlan({
  argv: process.argv,
  execArgv: process.execArgv,
  nodeOptions: process.env["NODE_OPTIONS"],
  platform: process.platform,
  canExecve: typeof process.execve === "function",
  sea: isSea(),
});
if (relaunch !== undefined) {
  try {
    const env = relaunch.nodeOptions === undefined ? process.env : { ...process.env, NODE_OPTIONS: relaunch.nodeOptions };
    process.execve?.(process.execPath, relaunch.argv, env);
  } catch {
    // Not allowed here (a sandbox, a permission): go on with the default young generation.
  }
}

// A reader that went away (`webhook-cli listen --json | head`) must not crash the
// command: its output is dropped, the work (deliveries, recording) goes on.
const ignoreClosedPipe = (error: NodeJS.ErrnoException): void => {
  if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
};
process.stdout.on("error", ignoreClosedPipe);
process.stderr.on("error", ignoreClosedPipe);

// `webhook-cli --version` alone needs neither commander nor the command table: answered as commander
// answers it, before either loads (other spellings, `--no-color --version`, go through commander).
// No top-level await: the single executable's bundle is CommonJS (scripts/build-sea.js), and run
// ends the process itself.
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) process.stdout.write(`${VERSION}\n`);
else void run(argv);

async function run(argv: readonly string[]): Promise<void> {
  const { main } = await import("./program.js");
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (name: "SIGINT" | "SIGTERM") => () => {
    signals += 1;
    // A second Ctrl-C means "now": skip the orderly report.
    if (signals > 1) process.exit(name === "SIGTERM" ? 143 : 130);
    controller.abort(name);
  };
  process.on("SIGINT", onSignal("SIGINT"));
  process.on("SIGTERM", onSignal("SIGTERM"));

  const code = await main(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    stdinIsTTY: process.stdin.isTTY === true,
    signal: controller.signal,
  });

  // process.exit does not wait for queued writes to a pipe: let them out first.
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  process.exit(code);
}

function drained(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || !stream.writable) return Promise.resolve();
  return new Promise((resolve) => stream.write("", () => resolve()));
}
