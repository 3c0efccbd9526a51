// Client library: enqueue cost and memory for 1,000,000 track calls of ~550 B against a loopback server.
// Reference, measured in the same run and interleaved with the client's bursts (every 4th) so both
// see the same machine load: building the same message, JSON.stringify and an array push.
// Targets: enqueue (validation and the 32 KB size check included) under 8 µs per call;
// memory bounded while the server is slower than the producer (the queue stops at maxQueueSize and
// further calls are dropped with QueueFullError).
//   Phase 1, fast server: the producer yields between bursts and waits while the queue is over half
//   full, so every call is delivered: enqueue cost, end-to-end throughput, memory.
//   Phase 2, slow server (50 ms per batch): the producer never waits: the queue fills, calls are
//   dropped, memory stays bounded.
import { spawn } from "node:child_process";
import { setImmediate as tick, setTimeout as wait } from "node:timers/promises";
import { Analytics } from "../dist/index.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 1_000_000);
const BURST = 1_000;
const TARGET_US = 8;
const MAX_QUEUE = 10_000; // the library's default maxQueueSize
const SLOW_DELAY_MS = 50;
// Each phase stops producing at this many seconds even if CALLS were not all made (a loaded machine).
const PHASE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 35);

// Watchdog: a benchmark must bound its own run time.
setTimeout(() => {
  console.error("client.bench: gave up after 120 s");
  process.exit(1);
}, 120_000).unref();

const PAD = "x".repeat(262);
function makeMessage(i) {
  return {
    userId: `user_${i % 5000}`,
    event: "Order Completed",
    properties: { orderId: `order_${i}`, revenue: 129.95, currency: "USD", coupon: "SPRING-SALE", note: PAD },
    context: { ip: "203.0.113.7" },
  };
}

// The collection endpoint runs in its own process so the producer keeps its core.
function startReceiver(delayMs) {
  const code = `
    import { createServer } from "node:http";
    createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const answer = () => res.writeHead(200, { "content-type": "application/json" }).end('{"success":true}');
        if (${delayMs} > 0) setTimeout(answer, ${delayMs}); else answer();
      });
    }).listen(0, "127.0.0.1", function () { console.log("http://127.0.0.1:" + this.address().port); });`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve) => {
    child.stdout.once("data", (chunk) => resolve({ url: chunk.toString().trim(), stop: () => child.kill() }));
  });
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const n = (value) => Math.round(value).toLocaleString("en");

async function run(endpoint, { paced }) {
  const analytics = new Analytics("bench", { endpoint, maxQueueSize: MAX_QUEUE, log: () => {} });
  let sink = [];
  globalThis.gc?.();
  const baseline = process.memoryUsage();
  let peakHeap = baseline.heapUsed;
  let peakRss = baseline.rss;
  let peakQueued = 0;
  let clientNs = 0n;
  let referenceNs = 0n;
  let referenceCalls = 0;
  const started = Date.now();
  let done = 0;
  for (; done < CALLS && Date.now() - started < PHASE_SECONDS * 1000; done += BURST) {
    // The reference runs on every 4th burst, right before the client's, to bound the run time.
    if ((done / BURST) % 4 === 0) {
      const start = process.hrtime.bigint();
      for (let i = done; i < done + BURST; i++) {
        sink.push(JSON.stringify({ type: "track", ...makeMessage(i), messageId: "m", timestamp: "t" }));
      }
      referenceNs += process.hrtime.bigint() - start;
      referenceCalls += BURST;
      if (sink.length >= MAX_QUEUE) sink = [];
    }

    const start = process.hrtime.bigint();
    for (let i = done; i < done + BURST; i++) analytics.track(makeMessage(i));
    clientNs += process.hrtime.bigint() - start;

    const memory = process.memoryUsage();
    peakHeap = Math.max(peakHeap, memory.heapUsed);
    peakRss = Math.max(peakRss, memory.rss);
    peakQueued = Math.max(peakQueued, analytics.stats().queued);
    await tick();
    if (paced) while (analytics.stats().queued > MAX_QUEUE / 2) await wait(1);
  }
  const producedMs = Date.now() - started;
  // What the client holds once garbage is gone: the bounded queue, not the calls made.
  globalThis.gc?.();
  const retained = process.memoryUsage().heapUsed - baseline.heapUsed;
  const queuedAtEnd = analytics.stats().queued;
  await analytics.close();
  const totalMs = Date.now() - started;
  return {
    calls: done,
    retained,
    queuedAtEnd,
    clientUs: Number(clientNs) / done / 1000,
    referenceUs: Number(referenceNs) / referenceCalls / 1000,
    producedMs,
    totalMs,
    heapGrowth: peakHeap - baseline.heapUsed,
    rssGrowth: peakRss - baseline.rss,
    peakQueued,
    stats: analytics.stats(),
  };
}

function report(label, r) {
  const ratio = r.clientUs / r.referenceUs;
  console.log(
    `${label}: enqueue ${r.clientUs.toFixed(2)} µs/call, reference ${r.referenceUs.toFixed(2)} µs/call → ${ratio.toFixed(2)}x reference; ` +
      `target < ${TARGET_US} µs: ${r.clientUs < TARGET_US ? "met" : "MISSED"}`,
  );
  console.log(
    `  delivered ${n(r.stats.delivered)} (${n((r.stats.delivered / r.totalMs) * 1000)} messages/s end to end), ` +
      `dropped ${n(r.stats.dropped)}, failed ${n(r.stats.failed)}, peak queue ${n(r.peakQueued)} of ${n(MAX_QUEUE)}, ` +
      `peak heap +${mb(r.heapGrowth)} (garbage included), peak rss +${mb(r.rssGrowth)}`,
  );
  console.log(
    `  retained heap after GC at the end of production: +${mb(r.retained)} with ${n(r.queuedAtEnd)} queued; ` +
      `${n(r.calls)} calls produced in ${r.producedMs} ms${r.calls < CALLS ? ` (stopped at the ${PHASE_SECONDS} s cap)` : ""}, closed after ${r.totalMs} ms`,
  );
}

const sample = JSON.stringify({ type: "track", ...makeMessage(123456), messageId: crypto.randomUUID(), timestamp: new Date().toISOString() });
console.log(`${n(CALLS)} track calls per phase, message JSON ${Buffer.byteLength(sample)} B, bursts of ${BURST}, default options`);

const fast = await startReceiver(0);
const a = await run(fast.url, { paced: true });
fast.stop();
report("fast server, paced producer", a);

const slow = await startReceiver(SLOW_DELAY_MS);
const b = await run(slow.url, { paced: false });
slow.stop();
report(`slow server (${SLOW_DELAY_MS} ms per batch), unpaced producer`, b);
const bounded = a.peakQueued <= MAX_QUEUE && b.peakQueued <= MAX_QUEUE;
console.log(`queue bounded by maxQueueSize (${n(MAX_QUEUE)}): ${bounded ? "yes" : "NO"}`);
process.exit(a.clientUs < TARGET_US && b.clientUs < TARGET_US && bounded ? 0 : 1);
