import { main } from "./program.js";

// The process entry: the only place that reads process.argv and calls process.exit.
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

const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  signal: controller.signal,
});
process.exit(code);
