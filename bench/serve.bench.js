// serve: the bundled client (Analytics, this process) → `serve` (child process)
// → a counting receiver (child process) on loopback, durable (SQLite) beside `serve --memory` in
// interleaved rounds, medians of 3. The figure is serve's own CPU per event (user+sys from /proc
// over the events the receiver counted): the cost of durability, as a ratio. Throughput, from the
// first call until the receiver has counted every event, is printed too (the target: durable >= 5,000/s).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { Analytics } from "../dist/index.js";
import { BIN, SECRET, cpuMs, formatCount as format, median, report, row, startListening, stopChild as stop } from "./lib.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const CONCURRENCY = 64;
const PHASE_LIMIT_MS = 40_000;

// Counts requests; GET /count reports. Its own process, like a real endpoint.
const RECEIVER = `
import { createServer } from "node:http";
let count = 0;
createServer((req, res) => {
  if (req.method === "GET") { res.writeHead(200).end(String(count)); return; }
  req.resume();
  req.on("end", () => { count += 1; res.writeHead(200).end("ok"); });
}).listen(0, "127.0.0.1", function () { console.log("Listening on http://127.0.0.1:" + this.address().port); });
`;

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

async function pipeline(memory) {
  const receiver = await startChild(["--input-type=module", "-e", RECEIVER]);
  const state = mkdtempSync(join(tmpdir(), "webhook-cli-bench-serve-"));
  const args = [
    BIN,
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

    const client = new Analytics("wk_bench", { endpoint: serve.url, flushAt: 100, flushAfter: 20, maxQueueSize: EVENTS + 1, concurrency: 4 });
    const startedAt = Date.now();
    const cpuBefore = cpuMs(serve.child.pid);
    for (let seq = 0; seq < EVENTS; seq++) {
      client.track({ userId: `user_${seq % 1000}`, event: "Order Completed", properties: properties(seq) });
      // Yield now and then so batches go out while the rest are queued, as in a real app.
      if (seq % 500 === 499) await new Promise((resolve) => setImmediate(resolve));
    }
    const flushed = client.close();
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
try {
  console.log(`${EVENTS} track events per run, serve --concurrency ${CONCURRENCY}, client flushAt 100, ${ROUNDS} interleaved rounds (medians)`);
  const runs = { memory: [], durable: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const memory of round % 2 === 0 ? [true, false] : [false, true]) {
      const run = await pipeline(memory);
      runs[memory ? "memory" : "durable"].push(run);
      console.log(
        `  round ${round + 1} serve ${memory ? "--memory" : "(durable)"}: ${format(run.perSecond)} events/s (${run.seen} in ${run.ms} ms), serve CPU ${run.cpuUsPerEvent.toFixed(1)} µs/event${run.complete ? "" : " INCOMPLETE"}`,
      );
    }
  }
  const cpu = (list) => median(list.map((r) => r.cpuUsPerEvent));
  const rate = (list) => median(list.map((r) => r.perSecond));
  const durable = { cpu: cpu(runs.durable), rate: rate(runs.durable) };
  const memory = { cpu: cpu(runs.memory), rate: rate(runs.memory) };
  console.log(
    `\nserve CPU per event: durable ${durable.cpu.toFixed(1)} µs vs --memory ${memory.cpu.toFixed(1)} µs: ${(durable.cpu / memory.cpu).toFixed(2)}x (the cost of durability)`,
  );
  console.log(`throughput: durable ${format(durable.rate)} vs --memory ${format(memory.rate)} events/s (target: durable >= 5,000/s)`);
  const r = row(
    "serve (durable) → receiver: serve CPU per event",
    { label: "serve (SQLite)", value: durable.cpu },
    { label: "serve --memory", value: memory.cpu },
    {
      unit: "µs",
      target: Infinity,
      lowerIsBetter: true,
      extra: { eventsPerSecond: { durable: durable.rate, memory: memory.rate }, complete: [...runs.durable, ...runs.memory].every((x) => x.complete) },
    },
  );
  r.target = "(shown, no target)";
  r.met = null;
  report([r]);
} finally {
  for (const child of children) child.kill("SIGKILL");
}
