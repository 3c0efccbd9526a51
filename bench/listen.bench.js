// listen throughput: autocannon against `listen --secret` (with and without --record) beside a
// minimal verifying receiver and a bare node:http receiver, all measured in this run.
// Targets (issue 4): listen --secret >= 90 % of the minimal receiver, >= 75 % with --record.
import autocannon from "autocannon";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BARE_RECEIVER, BIN, SECRET, cpuMs, orderCompleted, startListening, stopChild } from "./lib.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 20;

const body = JSON.stringify(orderCompleted("user_bench_0001", "order_5f2a9c1e"));
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

function load(url, duration) {
  return autocannon({
    url: `${url}/webhook`,
    method: "POST",
    connections: CONNECTIONS,
    duration,
    headers: { "content-type": "application/json", "x-signature": signature, "user-agent": "Segment.io/1.0" },
    body,
  });
}

async function measure(server) {
  const cpuBefore = cpuMs(server.child.pid);
  const result = await load(server.url, SECONDS);
  const cpuAfter = cpuMs(server.child.pid);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) console.log(`  ${server.label}: ${bad} non-2xx answers or errors!`);
  const cpu = cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1000) / result.requests.total;
  return { rps: result.requests.average, cpu };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const dir = mkdtempSync(join(tmpdir(), "webhook-cli-bench-"));
const recordFile = join(dir, "recording.ndjson");
const deadline = setTimeout(() => {
  console.error("listen.bench: over its time budget, giving up");
  process.exit(1);
}, (4 * (ROUNDS * SECONDS + 1) + 30) * 1000);
const servers = [];
try {
  console.log(`body ${Buffer.byteLength(body)} B, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${SECONDS} s per receiver (medians)`);
  const specs = [
    ["bare node:http", ["--input-type=module", "-e", BARE_RECEIVER]],
    ["minimal verifying receiver", ["--input-type=module", "-e", MINIMAL]],
    ["listen --secret", [BIN, "listen", "--port", "0", "--secret", SECRET]],
    ["listen --secret --record", [BIN, "listen", "--port", "0", "--secret", SECRET, "--record", recordFile]],
  ];
  for (const [label, args] of specs) servers.push({ label, ...(await startListening(args, { timeoutMs: 10_000 })), runs: [] });
  for (const server of servers) await load(server.url, 1); // warm-up
  // Round-robin, so a burst of load from elsewhere on the machine hits every receiver alike.
  for (let round = 0; round < ROUNDS; round++) for (const server of servers) server.runs.push(await measure(server));
  const summary = servers.map((server) => ({
    label: server.label,
    rps: median(server.runs.map((r) => r.rps)),
    cpu: server.runs.every((r) => r.cpu !== undefined) ? median(server.runs.map((r) => r.cpu)) : undefined,
  }));
  for (const s of summary) {
    console.log(`${s.label.padEnd(30)} ${Math.round(s.rps).toString().padStart(7)} req/s${s.cpu === undefined ? "" : `  server CPU ${s.cpu.toFixed(1)} µs/req`}`);
  }
  const [bare, minimal, listen, recorded] = summary;
  const ratio = (value) => `${((value.rps / minimal.rps) * 100).toFixed(1)} %`;
  const cpuRatio = (value) => (value.cpu && minimal.cpu ? `; CPU per request ${(value.cpu / minimal.cpu).toFixed(2)}x the minimal's` : "");
  console.log(`\nminimal / bare:                      ${((minimal.rps / bare.rps) * 100).toFixed(1)} %`);
  console.log(`listen --secret / minimal:           ${ratio(listen)}  (target >= 90 %) ${listen.rps / minimal.rps >= 0.9 ? "met" : "MISSED"}${cpuRatio(listen)}`);
  console.log(`listen --secret --record / minimal:  ${ratio(recorded)}  (target >= 75 %) ${recorded.rps / minimal.rps >= 0.75 ? "met" : "MISSED"}${cpuRatio(recorded)}`);
  console.log(`recording: ${(statSync(recordFile).size / 1024 / 1024).toFixed(1)} MB written`);
} finally {
  clearTimeout(deadline);
  await Promise.all(servers.map((server) => stopChild(server.child, "SIGTERM")));
  rmSync(dir, { recursive: true, force: true });
}
