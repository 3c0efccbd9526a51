// Delivery engine throughput: DeliveryEngine.deliver (sign, POST, classify, per-attempt deadline)
// against a bare node:http receiver in a child process, beside a reference measured in the same run
// against the same receiver: a plain undici Pool loop posting the same pre-serialized bodies with the
// same headers and HMAC, at the same concurrency. Two concurrencies: 1 (how `send` delivers, one
// message at a time) and 64 (how replay pushes it). Rounds alternate which path goes first; the
// figure is the median of the per-round ratios (each round's two runs share the machine's load).
// Target: the engine >= 90 % of the Pool loop at both concurrencies.
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { Pool } from "undici";
import { undiciEngine } from "../dist/delivery/undici-engine.js";

// Many short interleaved rounds, compared pairwise: the shared machine's load swings a lot.
const SECONDS = Number(process.env.DELIVERY_BENCH_SECONDS ?? 1.2);
const ROUNDS = Number(process.env.DELIVERY_BENCH_ROUNDS ?? 5);
const SECRET = "bench-secret-0123456789";
const TARGET = 0.9;

const BODIES = Array.from({ length: 1000 }, (_, i) =>
  JSON.stringify({
    version: 1,
    type: "track",
    userId: `user_${String(i).padStart(6, "0")}`,
    event: "Order Completed",
    properties: { orderId: `order_${i}`, revenue: 129.95, currency: "USD", products: [{ sku: "sku_a1b2c3d4", quantity: 1 }] },
    timestamp: "2024-03-14T09:26:53.589Z",
  }),
);

// The receiver runs in its own process so it does not share the client's event loop.
const RECEIVER = `
const http = require("node:http");
const server = http.createServer((req, res) => { req.on("data", () => {}); req.on("end", () => res.end()); });
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log("port " + server.address().port));
`;

async function startReceiver() {
  const child = spawn(process.execPath, ["-e", RECEIVER], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      const match = /port (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", () => reject(new Error("receiver exited")));
  });
  return { url: `http://127.0.0.1:${port}/hook`, stop: () => child.kill("SIGKILL") };
}

const cpu = { engine: [], pool: [] };

/** Runs `send(i)` from `concurrency` workers for SECONDS; returns messages per second (and records CPU µs per message). */
async function measure(concurrency, send, seconds = SECONDS, label) {
  const cpuStart = process.cpuUsage();
  const deadline = performance.now() + seconds * 1000;
  let count = 0;
  let next = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      await send(next++ % BODIES.length);
      count += 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(cpuStart);
  if (label) cpu[label].push((used.user + used.system) / count);
  return count / ((performance.now() - started) / 1000);
}

async function main() {
  const receiver = await startReceiver();
  const origin = new URL(receiver.url).origin;
  const results = [];
  try {
    for (const concurrency of [1, 64]) {
      const engine = undiciEngine(
        { targets: [{ url: receiver.url, headers: { "X-Env": "bench" } }], secret: SECRET, userAgent: "Segment.io/1.0" },
        { connections: concurrency },
      );
      const pool = new Pool(origin, { connections: concurrency, keepAliveTimeout: 10_000 });
      const viaEngine = async (i) => {
        const result = await engine.deliver(BODIES[i]);
        if (!result.delivered) throw new Error(`not delivered: ${JSON.stringify(result.urls)}`);
      };
      const viaPool = async (i) => {
        const body = Buffer.from(BODIES[i]);
        const response = await pool.request({
          path: "/hook",
          method: "POST",
          headers: {
            "User-Agent": "Segment.io/1.0",
            "Content-Type": "application/json",
            "X-Signature": createHmac("sha1", SECRET).update(body).digest("hex"),
            "X-Env": "bench",
          },
          body,
        });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
      };
      // Warm up both paths (connections, JIT).
      await measure(concurrency, viaEngine, 1);
      await measure(concurrency, viaPool, 1);
      const ratios = [];
      const engineRates = [];
      const poolRates = [];
      for (let round = 0; round < ROUNDS; round++) {
        let pool;
        let viaEngineRate;
        if (round % 2 === 0) {
          pool = await measure(concurrency, viaPool, SECONDS, "pool");
          viaEngineRate = await measure(concurrency, viaEngine, SECONDS, "engine");
        } else {
          viaEngineRate = await measure(concurrency, viaEngine, SECONDS, "engine");
          pool = await measure(concurrency, viaPool, SECONDS, "pool");
        }
        poolRates.push(pool);
        engineRates.push(viaEngineRate);
        ratios.push(viaEngineRate / pool);
      }
      await engine.close();
      await pool.close();
      const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      const ratio = median(ratios);
      results.push({ concurrency, ratio });
      const cpuEngine = median(cpu.engine.splice(0));
      const cpuPool = median(cpu.pool.splice(0));
      console.log(
        `concurrency ${String(concurrency).padStart(2)}: engine ${median(engineRates).toFixed(0)} msg/s, undici Pool loop ${median(poolRates).toFixed(0)} msg/s (medians); ` +
          `engine/Pool ratio ${ratio.toFixed(2)} (median of ${ratios.map((r) => r.toFixed(2)).join(" ")}; target >= ${TARGET}) ${ratio >= TARGET ? "PASS" : "MISS"}`,
      );
      console.log(`               client CPU per message: engine ${cpuEngine.toFixed(0)} µs, Pool loop ${cpuPool.toFixed(0)} µs (median)`);
    }
  } finally {
    receiver.stop();
  }
  return results.every((r) => r.ratio >= TARGET) ? 0 : 1;
}

process.exitCode = await main();
