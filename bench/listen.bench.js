// listen throughput: autocannon against `listen --secret` (with and without --record) beside a
// minimal verifying receiver and a bare node:http receiver, all measured in this run.
// Targets (issue 4): listen --secret >= 90 % of the minimal receiver, >= 75 % with --record.
import autocannon from "autocannon";
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin/webhook-cli.js", import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 20;
const SECRET = "bench-secret-0123456789";

const message = {
  version: 1,
  type: "track",
  userId: "user_bench_0001",
  event: "Order Completed",
  properties: {
    orderId: "order_5f2a9c1e",
    revenue: 129.95,
    currency: "USD",
    coupon: "SPRING-SALE",
    products: [
      { sku: "sku_a1b2c3d4", name: "Mechanical keyboard", price: 99.95, quantity: 1 },
      { sku: "sku_e5f6g7h8", name: "Wrist rest", price: 30, quantity: 1 },
    ],
    shipping: { method: "express", country: "NL", days: 2 },
  },
  timestamp: "2024-03-14T09:26:53.589Z",
  context: { ip: "203.0.113.7", library: { name: "analytics-node", version: "6.2.0" } },
};
const body = JSON.stringify(message);
const signature = createHmac("sha1", SECRET).update(body).digest("hex");

// Reference receivers run in their own processes, like listen, so each gets a core of its own.
const MINIMAL = `
import { createServer } from "node:http";
import { createHmac, timingSafeEqual } from "node:crypto";
const secret = ${JSON.stringify(SECRET)};
createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks);
    const expected = Buffer.from(createHmac("sha1", secret).update(raw).digest("hex"));
    const given = Buffer.from(String(req.headers["x-signature"] ?? ""));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) { res.writeHead(401).end(); return; }
    JSON.parse(raw.toString("utf8"));
    res.writeHead(200).end("ok");
  });
}).listen(0, "127.0.0.1", function () { console.log("Listening on http://127.0.0.1:" + this.address().port); });
`;
const BARE = `
import { createServer } from "node:http";
createServer((req, res) => { req.resume(); req.on("end", () => res.writeHead(200).end("ok")); })
  .listen(0, "127.0.0.1", function () { console.log("Listening on http://127.0.0.1:" + this.address().port); });
`;

function start(args) {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, NO_COLOR: "1", CI: "1" } });
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`no Listening line from ${args.join(" ")}`)), 10_000);
    const onData = (chunk) => {
      buffer += chunk;
      const match = /Listening on (\S+)/.exec(buffer);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      // Keep draining (listen prints a line per request) so the pipe never blocks it.
      child.stdout.resume();
      resolve({ child, url: match[1] });
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}`)));
  });
}

async function measure(label, args) {
  const { child, url } = await start(args);
  const options = {
    url: `${url}/webhook`,
    method: "POST",
    connections: CONNECTIONS,
    headers: { "content-type": "application/json", "x-signature": signature, "user-agent": "Segment.io/1.0" },
    body,
  };
  await autocannon({ ...options, duration: 1 }); // warm-up
  const result = await autocannon({ ...options, duration: SECONDS });
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("close", resolve));
  const bad = result.non2xx + result.errors + result.timeouts;
  console.log(`${label.padEnd(34)} ${Math.round(result.requests.average).toString().padStart(7)} req/s  p99 ${result.latency.p99} ms${bad ? `  (${bad} non-2xx/errors!)` : ""}`);
  return result.requests.average;
}

const dir = mkdtempSync(join(tmpdir(), "webhook-cli-bench-"));
const recordFile = join(dir, "recording.ndjson");
const deadline = setTimeout(() => {
  console.error("listen.bench: over its time budget, giving up");
  process.exit(1);
}, (SECONDS + 3) * 6 * 1000 + 30_000);
try {
  console.log(`body ${Buffer.byteLength(body)} B, ${CONNECTIONS} connections, ${SECONDS} s per run`);
  const bare = await measure("bare node:http", ["--input-type=module", "-e", BARE]);
  const minimal = await measure("minimal verifying receiver", ["--input-type=module", "-e", MINIMAL]);
  const listen = await measure("listen --secret", [BIN, "listen", "--port", "0", "--secret", SECRET]);
  const recorded = await measure("listen --secret --record", [BIN, "listen", "--port", "0", "--secret", SECRET, "--record", recordFile]);
  const ratio = (value) => `${((value / minimal) * 100).toFixed(1)} %`;
  console.log(`\nminimal / bare:                      ${((minimal / bare) * 100).toFixed(1)} %`);
  console.log(`listen --secret / minimal:           ${ratio(listen)}  (target >= 90 %) ${listen / minimal >= 0.9 ? "met" : "MISSED"}`);
  console.log(`listen --secret --record / minimal:  ${ratio(recorded)}  (target >= 75 %) ${recorded / minimal >= 0.75 ? "met" : "MISSED"}`);
  console.log(`recording: ${(statSync(recordFile).size / 1024 / 1024).toFixed(1)} MB written`);
} finally {
  clearTimeout(deadline);
  rmSync(dir, { recursive: true, force: true });
}
