// replay-actions: `webhook-cli replay --destination actions` of 100,000 track lines of the built shape
// (~480 B, 1,000 users) to a bare node:http receiver, in batches of 1,000 events per request
// (`--batch-size 1000`) beside the same replay unbatched (one event per request, concurrency 64),
// in interleaved rounds (which goes first alternates), medians of 3 with their spread. Figures: events/s over the
// process's whole run (start-up and the validation pass included), events/s over the sending pass
// alone (replay's own summary), and CPU per event (the process's own user+sys, GNU time). Target:
// batched ≥ 5× the unbatched events/s. Every batch of 1,000 consecutive lines holds each of the 1,000 users, so one user's
// order makes the batches go one after another: the figure is with that rule, as the aim assumes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BARE_RECEIVER,
  BIN,
  SECRET,
  TIME,
  formatCount as fmt,
  report,
  row,
  shownRow,
  runMeasured,
  startListening,
  stopChild,
  summaryOf,
  withSpread,
  writeTrackLines,
} from "./lib.js";

const EVENTS = Number(process.env.REPLAY_BENCH_EVENTS ?? 100_000);
const BATCH = Number(process.env.ACTIONS_BENCH_BATCH ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LIMIT_S = Number(process.env.BENCH_SECONDS_LIMIT ?? 30);

const dir = mkdtempSync(join(tmpdir(), "replay-actions-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

async function runReplay(file, url, batched) {
  const args = [BIN, "replay", file, "--url", `${url}/bench`, "--secret", SECRET, "--destination", "actions", "--json"];
  const run = await runMeasured(batched ? [...args, "--batch-size", String(BATCH)] : [...args, "--concurrency", "64"], { limitS: LIMIT_S });
  const s = summaryOf(run, batched ? "batched replay" : "replay");
  return { ...run, sent: s.sent, delivered: s.delivered, sendingRate: s.eventsPerSecond };
}

const perEvent = (run) => (run.cpuMs * 1000) / run.delivered;
const rate = (run) => (run.delivered * 1000) / run.wallMs;

const file = join(dir, "events.ndjson");
await writeTrackLines(file, EVENTS);
console.log(
  `${fmt(EVENTS)} track lines, --destination actions, batches of ${fmt(BATCH)} vs one event per request (c64), ${ROUNDS} interleaved rounds (medians), CPU from ${TIME ? "GNU time" : "/proc"}`,
);
const receiver = await startListening(["--input-type=module", "-e", BARE_RECEIVER], { label: "bare receiver" });
const batched = [];
const single = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [true, false] : [false, true];
    for (const inBatches of order) {
      const run = await runReplay(file, receiver.url, inBatches);
      (inBatches ? batched : single).push(run);
      const note = run.interrupted ? `, stopped after ${LIMIT_S} s` : "";
      console.log(
        `  round ${round + 1} ${(inBatches ? "batched" : "unbatched").padEnd(9)} ${fmt(run.delivered)} delivered in ${(run.wallMs / 1000).toFixed(2)} s: ${perEvent(run).toFixed(1)} µs CPU/event, ${fmt(rate(run))} events/s (sending pass ${fmt(run.sendingRate)}), peak RSS ${fmt(run.rssMb)} MB${note}`,
      );
    }
  }
} finally {
  await stopChild(receiver.child);
}
const throughput = row(
  `replay --destination actions ${fmt(EVENTS)} lines, batches of ${fmt(BATCH)}: throughput`,
  { label: "batched", values: batched.map(rate) },
  { label: "unbatched, c64", values: single.map(rate) },
  { unit: "events/s", target: 5, lowerIsBetter: false, paired: true },
);
const sending = row(
  `same, events/s over the sending pass alone (replay's summary)`,
  { label: "batched", values: batched.map((run) => run.sendingRate) },
  { label: "unbatched, c64", values: single.map((run) => run.sendingRate) },
  { unit: "events/s", target: 5, lowerIsBetter: false, paired: true },
);
// Reported beside the throughput; the aim is on events/s only.
const cpuRow = shownRow(
  `replay --destination actions ${fmt(EVENTS)} lines, batches of ${fmt(BATCH)}: CPU per event`,
  { label: "batched", values: batched.map(perEvent) },
  { label: "unbatched, c64", values: single.map(perEvent) },
  { unit: "µs", target: 1, lowerIsBetter: true, paired: true },
);
report([throughput, sending, cpuRow]);
console.log(
  `\nbatched ${withSpread(throughput.project)} vs unbatched ${withSpread(throughput.reference)} events/s: ${throughput.ratio.toFixed(2)}x (target ≥ 5x)`,
);
console.log(`sending pass alone: batched ${withSpread(sending.project)} vs unbatched ${withSpread(sending.reference)} events/s: ${sending.ratio.toFixed(2)}x`);
console.log(`CPU per event: batched ${withSpread(cpuRow.project)} µs, unbatched ${withSpread(cpuRow.reference)} µs`);
