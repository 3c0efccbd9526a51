// replay: `webhook-cli replay` of 100,000 track lines of the built shape (docs/messages.md#built-messages) (~480 B, 1,000 users)
// to a bare node:http receiver at concurrency 64, beside the reference (bench/reference-replay.js:
// a minimal undici Pool loop that reads the lines, signs and posts them) against the same receiver,
// in interleaved rounds (which goes first alternates), medians of 3. The primary figure is CPU per
// event: the process's own user+sys (GNU time, wait4) over the events it sent; the second is wall
// time as a throughput ratio. Then replay's peak RSS while sending 100,000 and 1,000,000 lines.
// Targets: CPU per event <= 1.15x the reference; throughput >= 0.90x; peak RSS < 120 MB at 1,000,000
// lines and within 10 % of the 100,000-line figure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  BARE_RECEIVER,
  BIN,
  SECRET,
  TIME,
  formatCount as fmt,
  median,
  report,
  row,
  runMeasured,
  startListening,
  stopChild,
  summaryOf,
  writeTrackLines,
} from "./lib.js";

const EVENTS = Number(process.env.REPLAY_BENCH_EVENTS ?? 100_000);
const BIG_LINES = Number(process.env.REPLAY_BENCH_BIG_LINES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Each run is stopped (SIGINT) after this long, so the benchmark stays bounded on a slow machine.
const LIMIT_S = Number(process.env.BENCH_SECONDS_LIMIT ?? 30);
const BIG_LIMIT_S = Number(process.env.REPLAY_BENCH_BIG_LIMIT ?? 90);
const CONCURRENCY = 64;
const REFERENCE = fileURLToPath(new URL("./reference-replay.js", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "replay-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

async function runReplay(file, url, limitS = LIMIT_S) {
  const run = await runMeasured([BIN, "replay", file, "--url", `${url}/bench`, "--secret", SECRET, "--concurrency", String(CONCURRENCY), "--json"], { limitS });
  const s = summaryOf(run, "replay");
  return { ...run, sent: s.sent, delivered: s.delivered };
}

async function runReference(file, url) {
  const run = await runMeasured([REFERENCE, file, `${url}/bench`, SECRET, String(CONCURRENCY)], { limitS: LIMIT_S });
  const s = summaryOf(run, "reference");
  return { ...run, sent: s.sent, delivered: s.delivered };
}

const perEvent = (run) => (run.cpuMs * 1000) / run.sent;
const rate = (run) => (run.sent * 1000) / run.wallMs;

const file = join(dir, "events.ndjson");
await writeTrackLines(file, EVENTS);
console.log(`${fmt(EVENTS)} track lines, concurrency ${CONCURRENCY}, ${ROUNDS} interleaved rounds (medians), CPU from ${TIME ? "GNU time" : "/proc"}`);
const receiver = await startListening(["--input-type=module", "-e", BARE_RECEIVER], { label: "bare receiver" });
const project = [];
const reference = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ["project", "reference"] : ["reference", "project"];
    for (const which of order) {
      const run = which === "project" ? await runReplay(file, receiver.url) : await runReference(file, receiver.url);
      (which === "project" ? project : reference).push(run);
      const note = run.interrupted ? `, stopped after ${LIMIT_S} s` : "";
      console.log(
        `  round ${round + 1} ${which.padEnd(9)} ${fmt(run.sent)} sent in ${(run.wallMs / 1000).toFixed(2)} s: ${perEvent(run).toFixed(1)} µs CPU/event, ${fmt(rate(run))} events/s, peak RSS ${fmt(run.rssMb)} MB${note}`,
      );
    }
  }
} finally {
  await stopChild(receiver.child);
}
const cpuProject = median(project.map(perEvent));
const cpuReference = median(reference.map(perEvent));
const rateProject = median(project.map(rate));
const rateReference = median(reference.map(rate));
const rss100k = median(project.map((r) => r.rssMb));

// Peak RSS with ten times the lines: memory must not grow with the file.
const big = join(dir, "big.ndjson");
await writeTrackLines(big, BIG_LINES);
const bigReceiver = await startListening(["--input-type=module", "-e", BARE_RECEIVER], { label: "bare receiver" });
let bigRun;
try {
  bigRun = await runReplay(big, bigReceiver.url, BIG_LIMIT_S);
} finally {
  await stopChild(bigReceiver.child);
}
rmSync(big, { force: true });
console.log(
  `  ${fmt(BIG_LINES)} lines: ${fmt(bigRun.sent)} sent in ${(bigRun.wallMs / 1000).toFixed(1)} s${bigRun.interrupted ? ` (stopped after ${BIG_LIMIT_S} s)` : ""}, peak RSS ${fmt(bigRun.rssMb)} MB; ${perEvent(bigRun).toFixed(1)} µs CPU/event`,
);

const rows = [
  row(
    `replay ${fmt(EVENTS)} lines → bare receiver, c64: CPU per event`,
    { label: "webhook-cli replay", value: cpuProject },
    { label: "undici Pool loop", value: cpuReference },
    { unit: "µs", target: 1.15, lowerIsBetter: true },
  ),
  row(
    `replay ${fmt(EVENTS)} lines: throughput`,
    { label: "webhook-cli replay", value: rateProject },
    { label: "undici Pool loop", value: rateReference },
    { unit: "events/s", target: 0.9, lowerIsBetter: false },
  ),
  row(
    `replay peak RSS while sending, ${fmt(BIG_LINES)} vs ${fmt(EVENTS)} lines`,
    { label: `${fmt(BIG_LINES)} lines`, value: bigRun.rssMb },
    { label: `${fmt(EVENTS)} lines`, value: rss100k },
    {
      unit: "MB",
      target: 1.1,
      lowerIsBetter: true,
      extra: { absoluteTarget: "< 120 MB at 1,000,000 lines", absoluteMet: bigRun.rssMb < 120, bigLinesSent: bigRun.sent, bigInterrupted: bigRun.interrupted },
    },
  ),
];
// Both parts of the target: flat in the file's size, and under 120 MB.
rows[2].target = "≤ 1.1× and < 120 MB";
rows[2].met = rows[2].met && bigRun.rssMb < 120;
report(rows);
console.log(
  `\nreplay CPU/event ${cpuProject.toFixed(1)} µs vs reference ${cpuReference.toFixed(1)} µs: ${(cpuProject / cpuReference).toFixed(2)}x (target ≤ 1.15x)`,
);
console.log(`replay throughput ${fmt(rateProject)} vs ${fmt(rateReference)} events/s: ${(rateProject / rateReference).toFixed(2)}x (target ≥ 0.90x)`);
console.log(`replay peak RSS ${fmt(rss100k)} MB (${fmt(EVENTS)} lines) / ${fmt(bigRun.rssMb)} MB (${fmt(BIG_LINES)} lines) (target < 120 MB and within 10 %)`);
