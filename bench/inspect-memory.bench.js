// `inspect FILE`'s memory on a large recording (docs/commands/inspect.md#large-recordings): writes a
// recording of INSPECT_BENCH_MB (default 1024) MB of listen's lines (about 1 KB each: messages with
// properties of varying size, every 50th a PUT batch, every 7th with the app's recorded answer),
// opens it with `inspect`, then pages through it, opens rows, searches the whole file for a
// string that only the oldest line holds (every 64 MiB step of it), searches by type and
// downloads 10,000 rows. Peak RSS is sampled every 20 ms; past the ceiling the run fails.
// Run it by name: `node bench/run.js inspect-memory` (after `npm run build`).
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { BIN, report, row, stopChild } from "./lib.js";

const SIZE_MB = Number(process.env.INSPECT_BENCH_MB ?? 1024);
const CEILING_MB = 256;
const MIB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "webhook-cli-inspect-bench-"));
const file = join(dir, "recording.ndjson");

function rssMb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

function message(i) {
  const needle = i === 0 ? "oldest-line-needle" : "plain";
  return {
    version: 1,
    type: "track",
    event: "Order Completed",
    userId: `user_${i % 5000}`,
    properties: { orderId: `o_${i}`, note: needle, pad: "p".repeat(500 + (i % 400)) },
    timestamp: "2026-01-02T03:04:05.678Z",
  };
}

function line(i) {
  const body = i % 50 === 49 ? [message(i), message(i + 1)] : message(i);
  const envelope = {
    receivedAt: "2026-01-02T03:04:05.678Z",
    method: Array.isArray(body) ? "PUT" : "POST",
    path: "/hook",
    headers: { "content-type": "application/json", "user-agent": "Segment.io/1.0", "x-signature": "0".repeat(40) },
    signatureValid: true,
    ...(Array.isArray(body) ? { signatureRule: "first-element" } : {}),
    body,
    ...(i % 7 === 0 ? { response: { status: 200, ms: 3, headers: { "content-type": "application/json" }, body: '{"ok":true}' } } : {}),
  };
  return `${JSON.stringify(envelope)}\n`;
}

/** Starts `inspect` on `path`; resolves once it prints the page's URL. */
function startInspect(path, onSpawn) {
  const child = spawn(process.execPath, [BIN, "inspect", path, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  onSpawn(child);
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout.setEncoding("utf8");
    const onData = (chunk) => {
      text += chunk;
      const match = /Inspector: (\S+)/.exec(text);
      if (!match) return;
      child.stdout.off("data", onData);
      child.stdout.resume();
      resolve({ child, url: match[1] });
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => reject(new Error(`inspect exited (${code}) before serving: ${text}`)));
  });
}

async function writeRecording() {
  const out = createWriteStream(file);
  let bytes = 0;
  let lines = 0;
  while (bytes < SIZE_MB * MIB) {
    let chunk = "";
    for (let j = 0; j < 1000; j++) chunk += line(lines++);
    bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise((resolve) => out.once("drain", resolve));
  }
  await new Promise((resolve) => out.end(resolve));
  return lines;
}

const t0 = performance.now();
const lines = await writeRecording();
console.log(`wrote ${lines.toLocaleString("en-US")} lines, ${(statSync(file).size / MIB).toFixed(0)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

let peak = 0;
let pid;
let over = false;
const sampler = setInterval(() => {
  const rss = pid ? rssMb(pid) : NaN;
  if (!(rss > 0)) return;
  peak = Math.max(peak, rss);
  if (rss > CEILING_MB * 2 && !over) over = true;
}, 20);

// The reference: the same command on a one-line recording.
const small = join(dir, "one.ndjson");
writeFileSync(small, line(0));
const baseline = await startInspect(small, () => {});
await new Promise((resolve) => setTimeout(resolve, 500));
const baselineRss = rssMb(baseline.child.pid);
await stopChild(baseline.child, "SIGINT");

const opened = performance.now();
const inspect = await startInspect(file, (child) => (pid = child.pid));
const indexS = (performance.now() - opened) / 1000;
const afterIndex = rssMb(pid);
const page = inspect.url;
const json = async (path) => (await request(`${page}${path}`)).body.json();
console.log(`indexed in ${indexS.toFixed(1)} s; RSS ${afterIndex.toFixed(0)} MB`);

try {
  // Page through the newest 100 pages, opening a row of each.
  let before = "";
  for (let i = 0; i < 100 && !over; i++) {
    const answer = await json(`/api/rows${before}`);
    await json(`/api/requests/${answer.rows[0].id}`);
    before = `?before=${answer.next}`;
  }
  // The whole file, step by step, for a string only its oldest line holds.
  const searched = performance.now();
  let next = null;
  let found = 0;
  let steps = 0;
  do {
    const answer = await json(`/api/search?q=oldest-line-needle${next === null ? "" : `&before=${next}`}`);
    found += answer.rows.length;
    next = answer.next;
    steps += 1;
  } while (next !== null && !over);
  const searchS = (performance.now() - searched) / 1000;
  console.log(`searched the whole file in ${steps} steps, ${searchS.toFixed(1)} s; ${found} match`);
  // Filters alone parse every line they look at: the first 200 batches.
  await json("/api/search?type=batch");
  const ids = Array.from({ length: 10_000 }, (_, i) => lines - i).join(",");
  const download = await request(`${page}/api/download?ids=${ids}`);
  await download.body.dump({ limit: 64 * MIB });
  console.log(`peak RSS ${peak.toFixed(0)} MB (a one-line recording: ${baselineRss.toFixed(0)} MB; ceiling ${CEILING_MB} MB)`);
  report([
    row(
      `inspect on ${SIZE_MB} MiB (index ${indexS.toFixed(0)} s, whole-file search ${searchS.toFixed(0)} s): peak RSS`,
      { label: "inspect", value: peak },
      { label: "ceiling", value: CEILING_MB },
      { unit: "MB", target: 1, lowerIsBetter: true, extra: { afterIndexMb: afterIndex, oneLineMb: baselineRss, indexS, searchS, lines } },
    ),
  ]);
  if (peak > CEILING_MB || found !== 1) process.exitCode = 1;
} finally {
  clearInterval(sampler);
  await stopChild(inspect.child, "SIGINT");
  rmSync(dir, { recursive: true, force: true });
}
