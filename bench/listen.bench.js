// listen: `webhook-cli listen --secret` beside a minimal verifying receiver (HMAC-SHA1
// of the raw body + timingSafeEqual + JSON.parse, in its own process, as listen is), both loaded by
// autocannon with a fixed signed ~480 B track body, in interleaved rounds, medians of 3.
// 1. A fixed offered load of 12,000 req/s over 20 connections: server CPU per request (its own
//    user+sys from /proc over the requests it answered). Target <= 1.15x the minimal's.
// 2. Unthrottled, 50 connections: req/s. Target >= 0.90x the minimal's.
import autocannon from "autocannon";
import { createHmac } from "node:crypto";
import { BIN, SECRET, cpuMs, formatCount as fmt, median, orderCompleted, report, row, startListening, stopChild } from "./lib.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RATE = Number(process.env.LISTEN_BENCH_RATE ?? 12_000);

const body = JSON.stringify(orderCompleted("user_bench_0001", "order_5f2a9c1e"));
const signature = createHmac("sha1", SECRET).update(body).digest("hex");

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

function load(url, { connections, duration, overallRate }) {
  return autocannon({
    url: `${url}/webhook`,
    method: "POST",
    connections,
    duration,
    ...(overallRate ? { overallRate } : {}),
    headers: { "content-type": "application/json", "x-signature": signature, "user-agent": "Segment.io/1.0" },
    body,
  });
}

async function measure(server, options) {
  const before = cpuMs(server.child.pid);
  const result = await load(server.url, options);
  const after = cpuMs(server.child.pid);
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) console.log(`  ${server.label}: ${bad} non-2xx answers or errors!`);
  return { total: result.requests.total, rps: result.requests.average, cpu: ((after - before) * 1000) / Math.max(1, result.requests.total) };
}

const deadline = setTimeout(
  () => {
    console.error("listen.bench: over its time budget, giving up");
    process.exit(1);
  },
  (ROUNDS * 4 * (SECONDS + 1) + 60) * 1000,
);
const servers = [];
try {
  console.log(`body ${Buffer.byteLength(body)} B; ${ROUNDS} interleaved rounds of ${SECONDS} s per receiver and load (medians)`);
  for (const [label, args] of [
    ["minimal verifying receiver", ["--input-type=module", "-e", MINIMAL]],
    ["listen --secret", [BIN, "listen", "--port", "0", "--secret", SECRET]],
  ]) {
    servers.push({ label, ...(await startListening(args, { timeoutMs: 20_000 })), fixed: [], open: [] });
  }
  for (const server of servers) await load(server.url, { connections: 20, duration: 1 }); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    // Which goes first alternates, so a burst of load from elsewhere hits both alike.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) {
      const fixed = await measure(server, { connections: 20, duration: SECONDS, overallRate: RATE });
      const open = await measure(server, { connections: 50, duration: SECONDS });
      server.fixed.push(fixed);
      server.open.push(open);
      console.log(
        `  round ${round + 1} ${server.label.padEnd(27)} at ${fmt(RATE)}/s: ${fmt(fixed.rps)} req/s, ${fixed.cpu.toFixed(1)} µs CPU/req; unthrottled: ${fmt(open.rps)} req/s`,
      );
    }
  }
  const [minimal, listen] = servers.map((s) => ({
    cpu: median(s.fixed.map((r) => r.cpu)),
    achieved: median(s.fixed.map((r) => r.rps)),
    rps: median(s.open.map((r) => r.rps)),
  }));
  console.log(
    `\nlisten --secret CPU/request at ${fmt(RATE)} req/s: ${listen.cpu.toFixed(1)} µs vs minimal ${minimal.cpu.toFixed(1)} µs: ${(listen.cpu / minimal.cpu).toFixed(2)}x (target ≤ 1.15x); offered load reached: ${fmt(listen.achieved)} / ${fmt(minimal.achieved)} req/s`,
  );
  console.log(
    `listen --secret unthrottled: ${fmt(listen.rps)} vs minimal ${fmt(minimal.rps)} req/s: ${(listen.rps / minimal.rps).toFixed(2)}x (target ≥ 0.90x)`,
  );
  report([
    row(
      `listen --secret at ${fmt(RATE)} req/s, 20 connections: server CPU per request`,
      { label: "listen --secret", value: listen.cpu },
      { label: "minimal verifier", value: minimal.cpu },
      {
        unit: "µs",
        target: 1.15,
        lowerIsBetter: true,
        extra: { achievedRps: { listen: listen.achieved, minimal: minimal.achieved } },
      },
    ),
    row(
      "listen --secret unthrottled, 50 connections: req/s",
      { label: "listen --secret", value: listen.rps },
      { label: "minimal verifier", value: minimal.rps },
      { unit: "req/s", target: 0.9, lowerIsBetter: false },
    ),
  ]);
} finally {
  clearTimeout(deadline);
  await Promise.all(servers.map((server) => stopChild(server.child, "SIGTERM")));
}
