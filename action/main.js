// @ts-check
// The action's main step: starts `webhook-cli listen` (or `serve`) in the background, waits until it
// listens, and hands its URLs to later steps. post.js stops it and judges what arrived.
// docs/guides/ci.md#the-github-action
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { splitArgs } from "./args.js";
import { booleanInput, countInput, input, mask, runStep, saveState, setOutput } from "./runner.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const READY_TIMEOUT_MS = 30_000;
// Line 1 of --ready-file is the URL; listen writes its control API's on line 2.
/** @type {Record<string, number>} */
const READY_LINES = { listen: 2, serve: 1 };

await runStep(main);

async function main() {
  // Not trimmed: a secret is used exactly as given. Masked before anything else is printed.
  const secret = process.env.INPUT_SECRET ?? "";
  if (secret !== "") mask(secret);
  // On Windows a process cannot be asked to stop (SIGTERM ends it at once): listen would never write its summary.
  if (process.platform === "win32") throw new Error("the webhook-cli action runs on Linux and macOS runners, not on Windows");
  const command = input("command", "listen");
  if (!Object.hasOwn(READY_LINES, command)) throw new Error(`input command: "${command}" is not listen or serve`);
  // Read now so a typo fails the step at once, not at the end of the job (post reads them again).
  countInput("expect-count", 1);
  booleanInput("fail-on-invalid", true);
  booleanInput("summary", true);
  const cwd = resolve(input("working-directory", "."));
  if (!existsSync(cwd)) throw new Error(`input working-directory: ${cwd} does not exist`);

  const dir = mkdtempSync(join(process.env.RUNNER_TEMP || tmpdir(), "webhook-cli-"));
  const ready = join(dir, "ready");
  // The action's flags come last, so they win over the same flags in args; --port 0 comes first, so args may set one.
  const argv = [cliEntry(), command, "--port", "0", ...splitArgs(input("args")), "--ready-file", ready, "--json"];
  const child = start(argv, cwd, dir, secret);
  const urls = await untilReady(child, ready, READY_LINES[command] ?? 1, join(dir, "log.txt"));
  saveState("pid", String(child.pid));
  saveState("dir", dir);
  saveState("command", command);
  setOutput("url", urls[0] ?? "");
  setOutput("control-url", urls[1] ?? "");
  console.log(`webhook-cli ${command} is listening on ${urls[0]}${urls[1] ? ` (control API ${urls[1]})` : ""}`);
}

/**
 * The bundled command line a release commits (scripts/action-release.js); a checkout that was built
 * (`uses: ./` after npm ci and npm run build: never a tag) runs its own build instead, fresher than
 * a bundle left from an earlier release build.
 */
function cliEntry() {
  if (existsSync(join(ROOT, "dist/cli/main.js")) && existsSync(join(ROOT, "node_modules"))) return join(ROOT, "bin/webhook-cli.js");
  const bundle = join(ROOT, "action/cli/webhook-cli.js");
  if (existsSync(bundle)) return bundle;
  throw new Error(
    "this commit of webhook-cli holds no bundled command line (action/cli/): use a release tag (uses: OWNER/webhook-cli@v1) or its commit, " +
      "or build this checkout first (npm ci && npm run build)",
  );
}

/**
 * In its own process group, with stdout (the JSON events) and stderr (the log) in files: the step can end while it runs.
 * @param {string[]} argv
 * @param {string} cwd
 * @param {string} dir this run's folder
 * @param {string} secret
 */
function start(argv, cwd, dir, secret) {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("INPUT_") || name.startsWith("STATE_")) delete env[name];
  if (secret !== "") env.WEBHOOK_SECRET = secret;
  const out = openSync(join(dir, "events.ndjson"), "a");
  const log = openSync(join(dir, "log.txt"), "a");
  try {
    return spawn(process.execPath, argv, { cwd, env, detached: true, stdio: ["ignore", out, log] });
  } finally {
    closeSync(out);
    closeSync(log);
  }
}

/**
 * The URLs once the ready file has them; an exit or READY_TIMEOUT_MS first is an error that quotes the log.
 * @param {import("node:child_process").ChildProcess} child
 * @param {string} readyFile
 * @param {number} lines
 * @param {string} logFile
 */
async function untilReady(child, readyFile, lines, logFile) {
  /** @type {string | undefined} */
  let exited;
  child.once("exit", (code, signal) => (exited = signal ?? `status ${code}`));
  child.once("error", (problem) => (exited = problem.message));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (exited === undefined && Date.now() < deadline) {
    const urls = existsSync(readyFile) ? readFileSync(readyFile, "utf8").split("\n").filter(Boolean) : [];
    if (urls.length >= lines) {
      child.unref();
      return urls;
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  if (exited === undefined) child.kill("SIGKILL");
  const log = existsSync(logFile) ? readFileSync(logFile, "utf8").trim() : "";
  throw new Error(
    `webhook-cli ${exited !== undefined ? `exited (${exited})` : `did not listen within ${READY_TIMEOUT_MS / 1000}s`} before it was ready${log ? `:\n${log}` : ""}`,
  );
}
