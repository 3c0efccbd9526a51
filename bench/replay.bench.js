// replay: `webhook-cli replay` of 100,000 track lines of the built shape (docs/messages.md#built-messages) (~480 B, 1,000 users)
// to a bare node:http receiver at concurrency 64, beside the reference (bench/reference-replay.js:
// a minimal undici Pool loop that reads the lines, signs and posts them) against the same receiver,
// in interleaved rounds (which goes first alternates), medians of 3 with their spread. The primary
// figure is CPU per event: the process's own user+sys (GNU time, wait4) over the events it sent;
// the second is wall time as a throughput ratio; the third each one's peak RSS. Then the memory
// curve: replay and the reference once each over 1,000,000 lines (and 5,000,000 with
// REPLAY_BENCH_HUGE_LINES=5000000), peak RSS beside the reference's at the same count and beside
// replay's own at 100,000 lines. BENCH_BASELINE=COMMIT adds that commit's build to the rounds.
// Targets: CPU per event <= 1.15x the reference; throughput >= 0.90x; peak RSS flat (1,000,000
// lines within 1.1x of 100,000) and <= 1.1x the reference's at the same count. In the same rounds,
// `replay --scheme standard` (Standard Webhooks: an id derived from each messageId, HMAC-SHA256 of
// id.timestamp.body, base64): CPU per event <= 1.10x the default scheme's (X-Signature) replay.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBaseline } from "./baseline.js";
import {
  BARE_RECEIVER,
  BIN,
  SECRET,
  TIME,
  formatCount as fmt,
  report,
  row,
  runMeasured,
  startListening,
  stopChild,
  summaryOf,
  withSpread,
  writeTrackLines,
} from "./lib.js";

const EVENTS = Number(process.env.REPLAY_BENCH_EVENTS ?? 100_000);
const BIG_LINES = Number(process.env.REPLAY_BENCH_BIG_LINES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Each run is stopped (SIGINT) after this long, so the benchmark stays bounded on a slow machine.
const LIMIT_S = Number(process.env.BENCH_SECONDS_LIMIT ?? 30);
const BIG_LIMIT_S = Number(process.env.REPLAY_BENCH_BIG_LIMIT ?? 90);
// The 5,000,000-line point of the memory curve, off by default (it takes minutes).
const HUGE_LINES = Number(process.env.REPLAY_BENCH_HUGE_LINES ?? 0);
const CONCURRENCY = 64;
const REFERENCE = fileURLToPath(new URL("./reference-replay.js", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "replay-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

// BENCH_BASELINE=COMMIT: that commit's build (bench/baseline.js) runs too, in the same rounds.
const baseline = process.env.BENCH_BASELINE ? buildBaseline(process.env.BENCH_BASELINE) : undefined;
process.on("exit", () => baseline?.cleanup());

// Standard Webhooks' secret: whsec_ and base64.
const STANDARD = ["--scheme", "standard", "--secret", `whsec_${Buffer.from(SECRET).toString("base64")}`];

async function runReplay(file, url, limitS = LIMIT_S, bin = BIN, signing = ["--secret", SECRET]) {
  const run = await runMeasured([bin, "replay", file, "--url", `${url}/bench`, ...signing, "--concurrency", String(CONCURRENCY), "--json"], { limitS });
  const s = summaryOf(run, "replay");
  return { ...run, sent: s.sent, delivered: s.delivered };
}

async function runReference(file, url, limitS = LIMIT_S) {
  const run = await runMeasured([REFERENCE, file, `${url}/bench`, SECRET, String(CONCURRENCY)], { limitS });
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
const before = [];
const standard = [];
const kinds = ["project", "standard", "reference", ...(baseline ? ["baseline"] : [])];
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Which goes first rotates each round.
    const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]);
    for (const which of order) {
      const run =
        which === "project"
          ? await runReplay(file, receiver.url)
          : which === "standard"
            ? await runReplay(file, receiver.url, LIMIT_S, BIN, STANDARD)
            : which === "baseline"
              ? await runReplay(file, receiver.url, LIMIT_S, baseline.bin)
              : await runReference(file, receiver.url);
      ({ project, reference, baseline: before, standard })[which].push(run);
      const note = run.interrupted ? `, stopped after ${LIMIT_S} s` : "";
      console.log(
        `  round ${round + 1} ${which.padEnd(9)} ${fmt(run.sent)} sent in ${(run.wallMs / 1000).toFixed(2)} s: ${perEvent(run).toFixed(1)} µs CPU/event, ${fmt(rate(run))} events/s, peak RSS ${fmt(run.rssMb)} MB${note}`,
      );
    }
  }
} finally {
  await stopChild(receiver.child);
}

// The memory curve: peak RSS with ten (and fifty) times the lines must not grow with the file.
const curve = [];
for (const lines of [BIG_LINES, HUGE_LINES].filter((n) => n > 0)) {
  const big = join(dir, `lines-${lines}.ndjson`);
  await writeTrackLines(big, lines);
  const bigReceiver = await startListening(["--input-type=module", "-e", BARE_RECEIVER], { label: "bare receiver" });
  const point = { lines };
  try {
    for (const which of ["project", "reference"]) {
      const limitS = Math.max(BIG_LIMIT_S, (BIG_LIMIT_S * lines) / 1_000_000);
      const run = which === "project" ? await runReplay(big, bigReceiver.url, limitS) : await runReference(big, bigReceiver.url, limitS);
      point[which] = run;
      console.log(
        `  ${fmt(lines)} lines, ${which.padEnd(9)} ${fmt(run.sent)} sent in ${(run.wallMs / 1000).toFixed(1)} s${run.interrupted ? ` (stopped after ${limitS} s)` : ""}, peak RSS ${fmt(run.rssMb)} MB; ${perEvent(run).toFixed(1)} µs CPU/event`,
      );
    }
  } finally {
    await stopChild(bigReceiver.child);
  }
  rmSync(big, { force: true });
  curve.push(point);
}

const cpuRow = row(
  `replay ${fmt(EVENTS)} lines → bare receiver, c64: CPU per event`,
  { label: "webhook-cli replay", values: project.map(perEvent) },
  { label: "undici Pool loop", values: reference.map(perEvent) },
  { unit: "µs", target: 1.15, lowerIsBetter: true, paired: true },
);
const rateRow = row(
  `replay ${fmt(EVENTS)} lines: throughput (wall)`,
  { label: "webhook-cli replay", values: project.map(rate) },
  { label: "undici Pool loop", values: reference.map(rate) },
  { unit: "events/s", target: 0.9, lowerIsBetter: false, paired: true },
);
const rssRow = row(
  `replay peak RSS, ${fmt(EVENTS)} lines`,
  { label: "webhook-cli replay", values: project.map((r) => r.rssMb) },
  { label: "undici Pool loop", values: reference.map((r) => r.rssMb) },
  { unit: "MB", target: 1.1, lowerIsBetter: true, paired: true },
);
const standardRow = row(
  `replay --scheme standard ${fmt(EVENTS)} lines: CPU per event, beside replay --secret (X-Signature)`,
  { label: "replay --scheme standard", values: standard.map(perEvent) },
  { label: "replay --secret", values: project.map(perEvent) },
  { unit: "µs", target: 1.1, lowerIsBetter: true, paired: true },
);
console.log(
  `replay --scheme standard CPU/event ${withSpread(standardRow.project)} µs vs replay --secret ${withSpread(standardRow.reference)} µs: ${standardRow.ratio.toFixed(2)}x, per round ${withSpread(standardRow.ratioSpread, 2)} (target ≤ 1.10x)`,
);
const rows = [cpuRow, rateRow, rssRow, standardRow];
if (baseline) {
  const b = row(
    `replay ${fmt(EVENTS)} lines: CPU per event beside ${baseline.sha}`,
    { label: "this build", values: project.map(perEvent) },
    { label: baseline.sha, values: before.map(perEvent) },
    { unit: "µs", target: 1, lowerIsBetter: true, paired: true },
  );
  console.log(
    `this build vs ${baseline.sha}: ${withSpread(b.project)} vs ${withSpread(b.reference)} µs CPU/event: ${b.ratio.toFixed(3)}x, per round ${withSpread(b.ratioSpread, 3)}`,
  );
  rows.push(b);
}
for (const point of curve) {
  const complete = !point.project.interrupted && !point.reference.interrupted;
  rows.push(
    row(
      `replay peak RSS, ${fmt(point.lines)} lines`,
      { label: "webhook-cli replay", value: point.project.rssMb },
      { label: "undici Pool loop", value: point.reference.rssMb },
      { unit: "MB", target: 1.1, lowerIsBetter: true, extra: { complete, sent: { project: point.project.sent, reference: point.reference.sent } } },
    ),
    row(
      `replay peak RSS flat: ${fmt(point.lines)} vs ${fmt(EVENTS)} lines`,
      { label: `${fmt(point.lines)} lines`, value: point.project.rssMb },
      { label: `${fmt(EVENTS)} lines (median)`, value: rssRow.project.value },
      { unit: "MB", target: 1.1, lowerIsBetter: true, extra: { complete } },
    ),
  );
}
report(rows);
console.log(
  `\nreplay CPU/event ${withSpread(cpuRow.project)} µs vs reference ${withSpread(cpuRow.reference)} µs: ${cpuRow.ratio.toFixed(2)}x, per round ${withSpread(cpuRow.ratioSpread, 2)} (target ≤ 1.15x)`,
);
console.log(`replay throughput ${withSpread(rateRow.project)} vs ${withSpread(rateRow.reference)} events/s: ${rateRow.ratio.toFixed(2)}x (target ≥ 0.90x)`);
console.log(
  `replay peak RSS ${[rssRow, ...curve.map((p) => ({ project: { value: p.project.rssMb }, reference: { value: p.reference.rssMb }, lines: p.lines }))]
    .map((r) => `${fmt(r.lines ?? EVENTS)} lines ${fmt(r.project.value)} MB (reference ${fmt(r.reference.value)} MB)`)
    .join(", ")} (target: flat within 1.1x, and ≤ 1.1x the reference's)`,
);
