// serve: the bundled client (Analytics, this process) → `serve` (child process)
// → a counting receiver (child process) on loopback, durable (SQLite) beside `serve --memory` in
// interleaved rounds, medians of 3 (with their spread). The figure is serve's own CPU per event (user+sys from /proc
// over the events the receiver counted): the cost of durability, as a ratio. Throughput, from the
// first call until the receiver has counted every event, is printed too (the target: durable >= 5,000/s).
// The durable queue runs on Node's node:sqlite. With BENCH_BASELINE=COMMIT, that commit's build (made in a temp dir) runs
// durable in the same rounds: the change's cost, as a ratio. Then batches of 100 posted as plain
// JSON and as gzip (a raw sender, as analytics-python with gzip=True): serve's CPU per event for each.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { request } from "undici";
import { Analytics } from "../dist/index.js";
import { buildBaseline } from "./baseline.js";
import {
  BIN,
  COUNTING_RECEIVER,
  SECRET,
  cpuMs,
  formatCount as format,
  median,
  report,
  row,
  shownRow,
  startListening,
  stopChild as stop,
  withSpread,
} from "./lib.js";

const SQLITE = "node:sqlite";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const CONCURRENCY = 64;
const PHASE_LIMIT_MS = 40_000;

function properties(seq) {
  return {
    seq,
    orderId: `order_${seq.toString(16).padStart(8, "0")}`,
    revenue: 129.95,
    currency: "USD",
    products: [{ sku: "sku_a1b2c3d4", name: "Mechanical keyboard", price: 99.95, quantity: 1 }],
  };
}

const children = new Set();
function startChild(args) {
  return startListening(args, {
    pipeStderr: true,
    onSpawn: (child) => {
      children.add(child);
      child.on("exit", () => children.delete(child));
    },
  });
}

async function count(url) {
  const response = await request(`${url}/count`);
  return Number(await response.body.text());
}

async function waitForCount(url, target, startedAt) {
  for (;;) {
    const seen = await count(url);
    if (seen >= target) return seen;
    if (Date.now() - startedAt > PHASE_LIMIT_MS) return seen;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Posts the events as batches of 100 to /v1/batch, 4 at a time, plain or gzip (bodies made beforehand). */
async function rawSend(url, events, gzip) {
  const bodies = [];
  for (let from = 0; from < events; from += 100) {
    const batch = [];
    for (let seq = from; seq < Math.min(events, from + 100); seq++) {
      batch.push({
        type: "track",
        userId: `user_${seq % 1000}`,
        event: "Order Completed",
        properties: properties(seq),
        context: { library: { name: "bench" } },
      });
    }
    const json = JSON.stringify({ batch, writeKey: "wk_bench" });
    bodies.push(gzip ? gzipSync(json) : json);
  }
  const headers = { "content-type": "application/json", ...(gzip ? { "content-encoding": "gzip" } : {}) };
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const response = await request(`${url}/v1/batch`, { method: "POST", headers, body });
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`serve answered ${response.statusCode}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

async function pipeline(memory, { bin = BIN, sender = "client" } = {}) {
  const receiver = await startChild(["--input-type=module", "-e", COUNTING_RECEIVER]);
  const state = mkdtempSync(join(tmpdir(), "webhook-cli-bench-serve-"));
  const args = [
    bin,
    "serve",
    "--port",
    "0",
    "--write-key",
    "wk_bench",
    "--url",
    `${receiver.url}/hook`,
    "--secret",
    SECRET,
    "--state",
    state,
    "--concurrency",
    String(CONCURRENCY),
  ];
  if (memory) args.push("--memory");
  const serve = await startChild(args);
  try {
    // Warm-up: connections, JIT, SQLite pages.
    const warm = new Analytics("wk_bench", { endpoint: serve.url, flushAt: 100, flushAfter: 20 });
    for (let i = 0; i < 2_000; i++) warm.track({ userId: `warm_${i % 100}`, event: "Warm Up", properties: properties(i) });
    await warm.close();
    await waitForCount(receiver.url, 2_000, Date.now());
    const base = await count(receiver.url);

    const startedAt = Date.now();
    const cpuBefore = cpuMs(serve.child.pid);
    let flushed;
    if (sender === "client") {
      const client = new Analytics("wk_bench", { endpoint: serve.url, flushAt: 100, flushAfter: 20, maxQueueSize: EVENTS + 1, concurrency: 4 });
      for (let seq = 0; seq < EVENTS; seq++) {
        client.track({ userId: `user_${seq % 1000}`, event: "Order Completed", properties: properties(seq) });
        // Yield now and then so batches go out while the rest are queued, as in a real app.
        if (seq % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
      }
      flushed = client.close();
    } else flushed = rawSend(serve.url, EVENTS, sender === "gzip");
    const seen = (await waitForCount(receiver.url, base + EVENTS, startedAt)) - base;
    const ms = Date.now() - startedAt;
    const cpuUsPerEvent = ((cpuMs(serve.child.pid) - cpuBefore) * 1000) / Math.max(1, seen);
    await flushed;
    return { perSecond: (seen / ms) * 1000, seen, ms, complete: seen >= EVENTS, cpuUsPerEvent };
  } finally {
    await stop(serve.child);
    await stop(receiver.child);
    rmSync(state, { recursive: true, force: true });
  }
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const baseline = process.env.BENCH_BASELINE ? buildBaseline(process.env.BENCH_BASELINE) : undefined;
try {
  console.log(
    `${EVENTS} track events per run, serve --concurrency ${CONCURRENCY}, client flushAt 100, ${ROUNDS} interleaved rounds (medians); durable on ${SQLITE} (Node.js ${process.version})`,
  );
  const variants = [
    { key: "memory", label: "serve --memory", memory: true },
    { key: "durable", label: `serve (durable, ${SQLITE})`, memory: false },
    ...(baseline ? [{ key: "baseline", label: `serve ${baseline.sha} (durable, before this change)`, memory: false, bin: baseline.bin }] : []),
    { key: "plain", label: "serve (durable), batches of 100 as plain JSON", memory: false, sender: "plain" },
    { key: "gzip", label: "serve (durable), batches of 100 as gzip", memory: false, sender: "gzip" },
  ];
  const runs = Object.fromEntries(variants.map((v) => [v.key, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Which goes first alternates: rotate the order by one each round.
    const order = variants.map((_, i) => variants[(i + round) % variants.length]);
    for (const variant of order) {
      const run = await pipeline(variant.memory, { bin: variant.bin, sender: variant.sender });
      runs[variant.key].push(run);
      console.log(
        `  round ${round + 1} ${variant.label}: ${format(run.perSecond)} events/s (${run.seen} in ${run.ms} ms), serve CPU ${run.cpuUsPerEvent.toFixed(1)} µs/event${run.complete ? "" : " INCOMPLETE"}`,
      );
    }
  }
  const cpu = (key) => runs[key].map((r) => r.cpuUsPerEvent);
  const rate = (key) => runs[key].map((r) => r.perSecond);
  const complete = Object.values(runs).every((list) => list.every((x) => x.complete));
  const rows = [];
  const r = shownRow(
    `serve (durable, ${SQLITE}) → receiver: serve CPU per event`,
    { label: `serve (${SQLITE})`, values: cpu("durable") },
    { label: "serve --memory", values: cpu("memory") },
    {
      unit: "µs",
      target: Infinity,
      lowerIsBetter: true,
      paired: true,
      extra: { eventsPerSecond: { durable: median(rate("durable")), memory: median(rate("memory")) }, complete },
    },
  );
  rows.push(r);
  console.log(
    `\nserve CPU per event: durable (${SQLITE}) ${withSpread(r.project)} µs vs --memory ${withSpread(r.reference)} µs: ${r.ratio.toFixed(2)}x (the cost of durability)`,
  );
  console.log(`throughput: durable ${format(median(rate("durable")))} vs --memory ${format(median(rate("memory")))} events/s (target: durable >= 5,000/s)`);
  if (baseline) {
    const b = row(
      `serve (durable, ${SQLITE}) CPU per event beside ${baseline.sha}`,
      { label: `this build (${SQLITE})`, values: cpu("durable") },
      { label: `${baseline.sha}`, values: cpu("baseline") },
      { unit: "µs", target: 1.05, lowerIsBetter: true, paired: true, extra: { complete } },
    );
    console.log(`this build vs ${baseline.sha}: durable ${withSpread(b.project)} µs vs ${withSpread(b.reference)} µs per event: ${b.ratio.toFixed(3)}x`);
    rows.push(b);
  }
  const g = shownRow(
    "serve (durable): gzip batches, serve CPU per event",
    { label: "gzip", values: cpu("gzip") },
    { label: "plain JSON", values: cpu("plain") },
    { unit: "µs", target: Infinity, lowerIsBetter: true, paired: true, extra: { complete } },
  );
  console.log(
    `batches of 100: gzip ${withSpread(g.project)} µs vs plain ${withSpread(g.reference)} µs per event: ${g.ratio.toFixed(2)}x (the cost of inflating)`,
  );
  rows.push(g);
  report(rows);
} finally {
  for (const child of children) child.kill("SIGKILL");
  baseline?.cleanup();
}
