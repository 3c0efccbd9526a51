// Shared by the *.bench.js files (not a benchmark itself: bench/run.js runs only *.bench.js).
import { spawn, spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { createWriteStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../bin/webhook-cli.js", import.meta.url));
export const SECRET = "bench-secret-0123456789";

/** A bare node:http receiver (`node --input-type=module -e BARE_RECEIVER`): the ceiling of the machine. */
export const BARE_RECEIVER = `
import { createServer } from "node:http";
createServer((req, res) => { req.resume(); req.on("end", () => res.writeHead(200).end("ok")); })
  .listen(0, "127.0.0.1", function () { console.log("Listening on http://127.0.0.1:" + this.address().port); });
`;

/** A receiver that counts the requests it answers; GET /count reports. Its own process, like a real endpoint. */
export const COUNTING_RECEIVER = `
import { createServer } from "node:http";
let count = 0;
createServer((req, res) => {
  if (req.method === "GET") { res.writeHead(200).end(String(count)); return; }
  req.resume();
  req.on("end", () => { count += 1; res.writeHead(200).end("ok"); });
}).listen(0, "127.0.0.1", function () { console.log("Listening on http://127.0.0.1:" + this.address().port); });
`;

/** A realistic track message, about 480 bytes serialized. */
export function orderCompleted(userId, orderId) {
  return {
    version: 1,
    type: "track",
    userId,
    event: "Order Completed",
    properties: {
      orderId,
      revenue: 129.95,
      currency: "USD",
      products: [
        { sku: "sku_a1b2c3d4", name: "Keyboard", price: 99.95, quantity: 1 },
        { sku: "sku_e5f6g7h8", name: "Wrist rest", price: 30, quantity: 1 },
      ],
      shipping: { method: "express", country: "NL", days: 2 },
    },
    timestamp: "2024-03-14T09:26:53.589Z",
    context: { ip: "203.0.113.7", library: { name: "analytics-node", version: "6.2.0" } },
  };
}

/** CPU time (user + system) of a process from /proc, in ms, or undefined: steadier than wall time on a shared, loaded machine. */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Spawns `node ARGS` and resolves with `{ child, url, stderr() }` at its
 * "Listening on URL" line. Its stdout keeps being drained (listen prints a line
 * per request) so the pipe never blocks it; stderr is inherited unless `pipeStderr`.
 * `onSpawn` sees the child at once (to kill it even when it never listens). `cpu`: pinned there (see pinned).
 */
export function startListening(args, { label = args.join(" "), pipeStderr = false, timeoutMs = 20_000, onSpawn, cpu } = {}) {
  const argv = cpu === undefined ? [process.execPath, ...args] : pinned([process.execPath, ...args], cpu);
  const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", pipeStderr ? "pipe" : "inherit"], env: { ...process.env, NO_COLOR: "1", CI: "1" } });
  onSpawn?.(child);
  let stderr = "";
  child.stderr?.on("data", (c) => (stderr += c));
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`no Listening line from ${label}${stderr ? `: ${stderr}` : ""}`)), timeoutMs);
    const onData = (chunk) => {
      buffer += chunk;
      const match = /Listening on (\S+)/.exec(buffer);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.stdout.resume();
      resolve({ child, url: match[1], stderr: () => stderr });
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code}) before listening`));
    });
  });
}

/** Stops a child with `signal` (SIGKILL after 10 s) and waits for its exit. */
export async function stopChild(child, signal = "SIGINT") {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

export const formatCount = (n) => Math.round(n).toLocaleString("en-US");

export const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

export const median = (values) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Runs `node ARGS` to its end (SIGINT to its process group after `limitS`), under GNU time when
 * present: the process's own user+sys CPU and peak RSS come from the kernel (wait4), so the
 * project and its reference are measured the same way, start-up included.
 */
export function runMeasured(args, { limitS = 60, env = {} } = {}) {
  const argv = TIME ? [TIME, "-v", process.execPath, ...args] : [process.execPath, ...args];
  const started = performance.now();
  // Its own process group, so SIGINT reaches node itself (GNU time does not pass signals on).
  const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, NO_COLOR: "1", CI: "1", ...env } });
  let stdout = "";
  let stderr = "";
  let lastCpuMs;
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  // Without GNU time: the last /proc reading (a little under the true figure).
  const poll = TIME ? undefined : setInterval(() => (lastCpuMs = cpuMs(child.pid) ?? lastCpuMs), 50);
  let interrupted = false;
  const timer = setTimeout(() => {
    interrupted = true;
    try {
      process.kill(-child.pid, "SIGINT");
    } catch {
      child.kill("SIGINT");
    }
  }, limitS * 1000);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      const wallMs = performance.now() - started;
      const field = (name) => Number(new RegExp(`${name}: ([\\d.]+)`).exec(stderr)?.[1] ?? NaN);
      const cpu = TIME ? (field("User time \\(seconds\\)") + field("System time \\(seconds\\)")) * 1000 : (lastCpuMs ?? NaN);
      resolve({ code, wallMs, cpuMs: cpu, rssMb: field("Maximum resident set size \\(kbytes\\)") / 1024, stdout, stderr, interrupted });
    });
  });
}

/** Generates `count` track lines of the built shape (docs/messages.md#built-messages) (1,000 users) into `path`. */
export async function writeTrackLines(path, count) {
  const out = createWriteStream(path);
  let chunk = "";
  for (let i = 0; i < count; i++) {
    chunk += `${trackLine(i)}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
      chunk = "";
    }
  }
  out.end(chunk);
  await new Promise((r) => out.on("finish", r));
}

/** Event i, about 480 bytes, 1,000 distinct users. */
export function trackLine(i) {
  return JSON.stringify(orderCompleted(`user_${String(i % 1000).padStart(6, "0")}`, `order_${i.toString(16).padStart(8, "0")}`));
}

/** The median of the finite values and their spread: `{ median, min, max, n }`. */
export function spread(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length };
}

/**
 * A summary row for bench/run.js: the project's figure beside its reference from the same run.
 * Each side is `{ label, values }` (one value per round: the row keeps the median and the spread,
 * min–max) or `{ label, value }` (a single figure). With `paired` (both sides measured in the same
 * interleaved rounds), the per-round ratios' spread is kept too. `lowerIsBetter`: the ratio of the
 * medians must stay at or under `target`; otherwise at or above.
 */
export function row(what, project, reference, { unit, target, lowerIsBetter, paired = false, extra }) {
  const side = ({ label, values, value }) => {
    if (values === undefined) return { label, value, min: value, max: value, n: 1 };
    const s = spread(values);
    return { label, value: s.median, min: s.min, max: s.max, n: s.n, values };
  };
  const p = side(project);
  const r = side(reference);
  const ratio = p.value / r.value;
  const met = Number.isFinite(ratio) ? (lowerIsBetter ? ratio <= target : ratio >= target) : null;
  let ratioSpread;
  if (paired && project.values && reference.values) {
    const ratios = project.values.map((v, i) => v / reference.values[i]);
    ratioSpread = spread(ratios);
  }
  return {
    what,
    unit,
    project: p,
    reference: r,
    ratio,
    ...(ratioSpread ? { ratioSpread } : {}),
    target: `${lowerIsBetter ? "≤" : "≥"} ${target}×`,
    met,
    ...(extra ? { extra } : {}),
  };
}

/** A row shown without a target (`(shown)`). */
export function shownRow(...args) {
  const r = row(...args);
  r.target = "(shown)";
  r.met = null;
  return r;
}

/**
 * `argv` prefixed with `taskset -c CPU` where the machine allows pinning (Linux, taskset present,
 * more than one CPU) and BENCH_PIN is not 0: a pinned process is not moved between cores, so its
 * CPU time per request swings less. Returns `argv` unchanged otherwise.
 */
export function pinned(argv, cpu) {
  return PIN ? ["taskset", "-c", String(cpu), ...argv] : argv;
}

/** Pins this process, all its threads, to `cpu` (see pinned); false when it cannot. */
export function pinSelf(cpu) {
  if (!PIN) return false;
  return spawnSync("taskset", ["-a", "-p", "-c", String(cpu), String(process.pid)], { stdio: "ignore" }).status === 0;
}

export const PIN =
  process.env.BENCH_PIN !== "0" &&
  process.platform === "linux" &&
  availableParallelism() > 1 &&
  spawnSync("taskset", ["-c", "0", "true"], { stdio: "ignore" }).status === 0;

/** `12.3 µs [11.8–13.0]`: a median with its spread. */
export function withSpread(s, digits = 1) {
  const f = (v) => (Math.abs(v) >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(digits));
  return s.n > 1 ? `${f(s.median ?? s.value)} [${f(s.min)}–${f(s.max)}]` : f(s.median ?? s.value);
}

/** Hands this benchmark's rows to bench/run.js, through the file it names (run alone, a benchmark only prints). */
export function report(rows) {
  const file = process.env.BENCH_ROWS_FILE;
  if (file) writeFileSync(file, JSON.stringify(rows));
}

/** The `summary` event a `--json` run printed last, or `{ sent: 0, delivered: 0 }` after saying why there is none. */
export function summaryOf(run, label) {
  const last = run.stdout.trim().split("\n").at(-1) ?? "";
  try {
    const summary = JSON.parse(last);
    if (summary.event === "summary") return summary;
  } catch {}
  process.stderr.write(`${label} gave no summary (exit ${run.code}); stdout ends: ${run.stdout.slice(-400)}\nstderr: ${run.stderr.slice(0, 1500)}\n`);
  return { sent: 0, delivered: 0 };
}

export const BASH = existsSync("/bin/bash") ? "/bin/bash" : undefined;
const TIMED = 'TIMEFORMAT="%3R %3U %3S"; time "$@" >/dev/null 2>/dev/null';

/**
 * One run of `argv` (the command first): wall and CPU (user+sys) ms, from bash's `time` (wait4's
 * figures, to the millisecond; bash's own start not counted); without bash, wall measured here and no CPU.
 */
export function timedStart(argv) {
  const env = { ...process.env, NO_COLOR: "1" };
  const [command, ...args] = argv;
  if (BASH === undefined) {
    const started = performance.now();
    const result = spawnSync(command, args, { stdio: "ignore", env });
    if (result.status !== 0) throw new Error(`${argv.join(" ")} exited ${result.status}`);
    return { wall: performance.now() - started, cpu: Number.NaN };
  }
  const result = spawnSync(BASH, ["-c", TIMED, "bash", ...argv], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", env });
  const [wall, user, sys] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  if (result.status !== 0 || !Number.isFinite(wall)) throw new Error(`${argv.join(" ")} exited ${result.status}: ${result.stderr}`);
  return { wall: wall * 1000, cpu: (user + sys) * 1000 };
}
