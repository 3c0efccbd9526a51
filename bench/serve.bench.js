// serve end-to-end throughput: the bundled client (Analytics, this process) → `serve` (child
// process, durable SQLite queue) → a receiver (child process) on loopback, in events per second
// from the first call until the receiver has counted every event. Measured in the same run:
// the same pipeline with `serve --memory` (the cost of durability, as a ratio), and a reference:
// the same events POSTed by undici straight to the receiver, one request each, at serve's concurrency.
// Targets (issue 7): durable >= 5,000 events/s on a 2-core machine, aim 10,000.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { Analytics } from "../dist/index.js";
import { BIN, SECRET, cpuMs, formatCount as format, startListening, stopChild as stop } from "./lib.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
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
  const args = [BIN, "serve", "--port", "0", "--write-key", "wk_bench", "--url", `${receiver.url}/hook`, "--secret", SECRET, "--state", state, "--concurrency", String(CONCURRENCY)];
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

async function reference() {
  const receiver = await startChild(["--input-type=module", "-e", RECEIVER]);
  const agent = new Agent({ connections: CONCURRENCY });
  try {
    const bodies = Array.from({ length: EVENTS }, (_, seq) =>
      JSON.stringify({ version: 1, type: "track", userId: `user_${seq % 1000}`, event: "Order Completed", properties: properties(seq), timestamp: new Date().toISOString() }),
    );
    let next = 0;
    const startedAt = Date.now();
    const worker = async () => {
      while (next < bodies.length && Date.now() - startedAt < PHASE_LIMIT_MS) {
        const body = bodies[next++];
        const response = await request(`${receiver.url}/hook`, { method: "POST", body, headers: { "content-type": "application/json" }, dispatcher: agent });
        await response.body.dump();
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const ms = Date.now() - startedAt;
    return { perSecond: (next / ms) * 1000, seen: next, ms };
  } finally {
    await agent.close();
    await stop(receiver.child);
  }
}

try {
  console.log(`${EVENTS} track events per run, serve --concurrency ${CONCURRENCY}, client flushAt 100`);
  const ref = await reference();
  console.log(`reference: undici POST straight to the receiver   ${format(ref.perSecond)} events/s (${ref.seen} in ${ref.ms} ms)`);
  const memory = await pipeline(true);
  console.log(`client → serve --memory → receiver              ${format(memory.perSecond)} events/s (${memory.seen} in ${memory.ms} ms, serve CPU ${memory.cpuUsPerEvent.toFixed(0)} µs/event)${memory.complete ? "" : " INCOMPLETE"}`);
  const durable = await pipeline(false);
  console.log(`client → serve (durable, SQLite) → receiver      ${format(durable.perSecond)} events/s (${durable.seen} in ${durable.ms} ms, serve CPU ${durable.cpuUsPerEvent.toFixed(0)} µs/event)${durable.complete ? "" : " INCOMPLETE"}`);
  console.log(`durable / memory (cost of durability):           ${(durable.perSecond / memory.perSecond).toFixed(2)}x throughput, ${(durable.cpuUsPerEvent / memory.cpuUsPerEvent).toFixed(2)}x serve CPU per event`);
  console.log(`durable / reference:                             ${(durable.perSecond / ref.perSecond).toFixed(2)}x`);
  const met = durable.complete && durable.perSecond >= 5_000;
  console.log(`target >= 5,000 events/s durable (aim 10,000):   ${met ? "met" : "MISSED"}`);
} finally {
  for (const child of children) child.kill("SIGKILL");
}
