// functions: webhook-cli's functions runtime under load (docs/functions.md).
//
// 1. `replay` of 100,000 track lines of the built shape through a destination function that
//    returns at once (`--function`), beside the same replay to a local `listen --secret` over
//    HTTP (its own process), both at concurrency 64, in interleaved rounds (which goes first
//    alternates), medians of 3 with their spread. The figure is replay's own CPU per event (user+sys,
//    GNU time, start-up included): a function run in process must cost no more than a request
//    (target: ratio ≤ 1). Throughput is shown too.
// 2. `serve --source-function` (durable) taking a burst of 2,000 webhooks at once, each making one
//    Segment.track, forwarded to a counting receiver: every webhook answered 200, every call
//    delivered (nothing lost), none answered later than the function's 5 s limit after it was sent.
//    serve's own CPU per webhook (/proc) is shown beside the same burst of one-call /v1/track
//    requests (a client's call, no function), in the same rounds.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import {
  BIN,
  COUNTING_RECEIVER,
  SECRET,
  TIME,
  cpuMs,
  formatCount as fmt,
  median,
  report,
  row,
  runMeasured,
  shownRow,
  startListening,
  stopChild,
  summaryOf,
  withSpread,
  writeTrackLines,
} from "./lib.js";

const EVENTS = Number(process.env.REPLAY_BENCH_EVENTS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LIMIT_S = Number(process.env.BENCH_SECONDS_LIMIT ?? 60);
const BURST = Number(process.env.FUNCTIONS_BENCH_BURST ?? 2_000);
const CONCURRENCY = 64;
/** The service's limit per invocation: no webhook may be answered later than this after it was sent. */
const FUNCTION_LIMIT_MS = 5_000;

const dir = mkdtempSync(join(tmpdir(), "functions-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const children = new Set();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});
const started = (child) => {
  children.add(child);
  child.on("exit", () => children.delete(child));
};

const RETURNS = join(dir, "returns.js");
writeFileSync(RETURNS, "async function onTrack(event, settings) { return }\n");
const SOURCE = join(dir, "source.js");
writeFileSync(
  SOURCE,
  "async function onRequest(request) {\n  const body = request.json()\n  Segment.track({ event: 'Burst', userId: body.userId, properties: { seq: body.seq } })\n}\n",
);

const perEvent = (run) => (run.cpuMs * 1000) / run.delivered;
const rate = (run) => (run.delivered * 1000) / run.wallMs;

async function replayRun(file, target) {
  const args = [BIN, "replay", file, ...target, "--concurrency", String(CONCURRENCY), "--json"];
  const run = await runMeasured(args, { limitS: LIMIT_S });
  const s = summaryOf(run, "replay");
  return { ...run, delivered: s.delivered };
}

async function replayRounds() {
  const file = join(dir, "events.ndjson");
  await writeTrackLines(file, EVENTS);
  console.log(
    `replay ${fmt(EVENTS)} track lines, concurrency ${CONCURRENCY}: a function that returns at once vs a local listen over HTTP, ${ROUNDS} interleaved rounds, CPU from ${TIME ? "GNU time" : "/proc"}`,
  );
  const listen = await startListening([BIN, "listen", "--port", "0", "--secret", SECRET], { pipeStderr: true, onSpawn: started });
  const fn = [];
  const http = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ["function", "listen"] : ["listen", "function"];
      for (const which of order) {
        const run =
          which === "function" ? await replayRun(file, ["--function", RETURNS]) : await replayRun(file, ["--url", `${listen.url}/bench`, "--secret", SECRET]);
        (which === "function" ? fn : http).push(run);
        const note = run.interrupted ? `, stopped after ${LIMIT_S} s` : "";
        console.log(
          `  round ${round + 1} ${which.padEnd(8)} ${fmt(run.delivered)} delivered in ${(run.wallMs / 1000).toFixed(2)} s: ${perEvent(run).toFixed(1)} µs CPU/event, ${fmt(rate(run))} events/s, peak RSS ${fmt(run.rssMb)} MB${note}`,
        );
      }
    }
  } finally {
    await stopChild(listen.child);
  }
  const cpu = row(
    `replay ${fmt(EVENTS)} lines through a function that returns at once: CPU per event`,
    { label: "replay --function", values: fn.map(perEvent) },
    { label: "replay --url (listen)", values: http.map(perEvent) },
    { unit: "µs", target: 1, lowerIsBetter: true, paired: true },
  );
  const throughput = shownRow(
    `replay ${fmt(EVENTS)} lines through a function: throughput (wall)`,
    { label: "replay --function", values: fn.map(rate) },
    { label: "replay --url (listen)", values: http.map(rate) },
    { unit: "events/s", target: 1, lowerIsBetter: false, paired: true },
  );
  console.log(
    `\nCPU per event: function ${withSpread(cpu.project)} µs vs listen ${withSpread(cpu.reference)} µs: ${cpu.ratio.toFixed(2)}x, per round ${withSpread(cpu.ratioSpread, 2)} (target ≤ 1x: ${cpu.met ? "met" : "MISSED"})`,
  );
  console.log(`throughput: function ${withSpread(throughput.project)} vs listen ${withSpread(throughput.reference)} events/s: ${throughput.ratio.toFixed(2)}x`);
  return [cpu, throughput];
}

/** One burst: `BURST` POSTs sent at once; each answer's status and its time from sending. */
async function burst(url, path, bodyOf) {
  const dispatcher = new Agent({ connections: BURST, pipelining: 1 });
  try {
    return await Promise.all(
      Array.from({ length: BURST }, async (_, seq) => {
        const sent = performance.now();
        try {
          const response = await request(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: bodyOf(seq), dispatcher });
          await response.body.dump();
          return { status: response.statusCode, ms: performance.now() - sent };
        } catch (error) {
          return { status: 0, ms: performance.now() - sent, error: error.message };
        }
      }),
    );
  } finally {
    await dispatcher.close();
  }
}

async function counted(url) {
  const response = await request(`${url}/count`);
  return Number(await response.body.text());
}

/** serve (durable) with the source function, forwarding to the counting receiver; the burst to `path`; until every call arrived (or 30 s). */
async function serveBurst(kind) {
  const receiver = await startListening(["--input-type=module", "-e", COUNTING_RECEIVER], { pipeStderr: true, onSpawn: started });
  const state = mkdtempSync(join(dir, "state-"));
  const serve = await startListening(
    [BIN, "serve", "--port", "0", "--state", state, "--url", `${receiver.url}/hook`, "--secret", SECRET, "--source-function", `burst=${SOURCE}`],
    { pipeStderr: true, onSpawn: started },
  );
  try {
    const before = cpuMs(serve.child.pid) ?? Number.NaN;
    const wall = performance.now();
    const answers =
      kind === "function"
        ? await burst(serve.url, "/functions/burst", (seq) => JSON.stringify({ userId: `user_${seq % 100}`, seq }))
        : await burst(serve.url, "/v1/track", (seq) => JSON.stringify({ userId: `user_${seq % 100}`, event: "Burst", properties: { seq } }));
    const answeredMs = performance.now() - wall;
    const deadline = Date.now() + 30_000;
    let delivered = await counted(receiver.url);
    while (delivered < BURST && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      delivered = await counted(receiver.url);
    }
    const cpu = (cpuMs(serve.child.pid) ?? Number.NaN) - before;
    const ok = answers.filter((answer) => answer.status === 200).length;
    const late = answers.filter((answer) => answer.ms > FUNCTION_LIMIT_MS).length;
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    const p99 = [...answers.map((answer) => answer.ms)].sort((a, b) => a - b)[Math.floor(answers.length * 0.99)];
    return {
      kind,
      ok,
      late,
      slowest,
      p99,
      delivered,
      answeredMs,
      cpuPerEvent: (cpu * 1000) / BURST,
      errors: answers.filter((answer) => answer.status !== 200).slice(0, 3),
    };
  } finally {
    await stopChild(serve.child);
    await stopChild(receiver.child);
  }
}

async function burstRounds() {
  console.log(
    `\nserve --source-function (durable): bursts of ${fmt(BURST)} webhooks at once, one Segment.track each; beside the same bursts of one-call /v1/track requests`,
  );
  const fn = [];
  const track = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ["function", "track"] : ["track", "function"];
    for (const kind of order) {
      const run = await serveBurst(kind);
      (kind === "function" ? fn : track).push(run);
      console.log(
        `  round ${round + 1} ${kind.padEnd(8)} ${fmt(run.ok)}/${fmt(BURST)} answered 200 in ${(run.answeredMs / 1000).toFixed(2)} s (p99 ${run.p99.toFixed(0)} ms, slowest ${run.slowest.toFixed(0)} ms, ${run.late} after ${FUNCTION_LIMIT_MS / 1000} s), ${fmt(run.delivered)} delivered; serve ${run.cpuPerEvent.toFixed(1)} µs CPU/webhook${run.errors.length ? `; e.g. ${JSON.stringify(run.errors)}` : ""}`,
      );
    }
  }
  const lost = fn.map((run) => BURST - Math.min(run.ok, run.delivered));
  const late = fn.map((run) => run.late);
  const whole = row(
    `serve --source-function, bursts of ${fmt(BURST)}: webhooks answered 200 and delivered`,
    { label: "every call delivered", values: fn.map((run) => Math.min(run.ok, run.delivered)) },
    { label: "webhooks sent", value: BURST },
    { unit: "webhooks", target: 1, lowerIsBetter: false },
  );
  const intime = row(
    `serve --source-function, bursts of ${fmt(BURST)}: slowest answer (limit ${FUNCTION_LIMIT_MS / 1000} s)`,
    { label: "slowest answer", values: fn.map((run) => run.slowest) },
    { label: "the function's limit", value: FUNCTION_LIMIT_MS },
    { unit: "ms", target: 1, lowerIsBetter: true },
  );
  const cpu = shownRow(
    `serve, bursts of ${fmt(BURST)}: serve's CPU per webhook`,
    { label: "/functions/NAME (source function)", values: fn.map((run) => run.cpuPerEvent) },
    { label: "/v1/track (a client's call)", values: track.map((run) => run.cpuPerEvent) },
    { unit: "µs", target: 1, lowerIsBetter: true, paired: true },
  );
  console.log(
    `\nsource function bursts: lost ${lost.join(", ")} (target 0), answered after ${FUNCTION_LIMIT_MS / 1000} s ${late.join(", ")} (target 0); slowest ${withSpread(intime.project, 0)} ms, p99 ${median(fn.map((run) => run.p99)).toFixed(0)} ms`,
  );
  console.log(`serve's CPU per webhook: function ${withSpread(cpu.project)} µs vs /v1/track ${withSpread(cpu.reference)} µs: ${cpu.ratio.toFixed(2)}x`);
  return [whole, intime, cpu];
}

report([...(await replayRounds()), ...(await burstRounds())]);
