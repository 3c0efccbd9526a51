// listen: `webhook-cli listen --secret` beside a minimal verifying receiver (HMAC-SHA1
// of the raw body + timingSafeEqual + JSON.parse, in its own process, as listen is), both loaded by
// autocannon with a fixed signed ~480 B track body, in interleaved rounds.
// 1. A fixed offered load of 12,000 req/s over 20 connections: server CPU per request (its own
//    user+sys from /proc over the requests it answered). Target <= 1.15x the minimal's. The two
//    receivers take turns, round after round (which goes first alternates), so a burst of load
//    from elsewhere falls on both alike; the rounds are short and many (default 6 of 4 s), and the
//    figure is the ratio of the medians, printed with each side's spread (min–max) and the spread
//    of the per-round ratios. Where the machine allows (taskset), both receivers run pinned to one
//    CPU and autocannon (this process) to the other, so neither is moved between cores mid-round.
// 2. With LISTEN_BENCH_OPEN=1, also unthrottled over 50 connections: req/s (target >= 0.90x the
//    minimal's). Off by default: on a shared 2-core machine it measures the machine more than listen.
import autocannon from "autocannon";
import { createHmac } from "node:crypto";
import { BIN, PIN, SECRET, cpuMs, formatCount as fmt, orderCompleted, pinSelf, report, row, spread, startListening, stopChild, withSpread } from "./lib.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.LISTEN_BENCH_ROUNDS ?? 6);
const RATE = Number(process.env.LISTEN_BENCH_RATE ?? 12_000);
const OPEN = process.env.LISTEN_BENCH_OPEN === "1";
// The receivers on the last CPU, the load (this process) on the first.
const SERVER_CPU = 1;
const pinnedHere = PIN && pinSelf(0);

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
  (ROUNDS * 2 * (OPEN ? 2 : 1) * (SECONDS + 1) + 60) * 1000,
);
const servers = [];
try {
  console.log(
    `body ${Buffer.byteLength(body)} B; ${ROUNDS} interleaved rounds of ${SECONDS} s per receiver at ${fmt(RATE)} req/s${OPEN ? " and unthrottled" : ""}; ${
      pinnedHere ? `receivers pinned to CPU ${SERVER_CPU}, autocannon to CPU 0` : "not pinned (no taskset, one CPU, or BENCH_PIN=0)"
    }`,
  );
  for (const [label, args] of [
    ["minimal verifying receiver", ["--input-type=module", "-e", MINIMAL]],
    ["listen --secret", [BIN, "listen", "--port", "0", "--secret", SECRET]],
  ]) {
    servers.push({ label, ...(await startListening(args, { timeoutMs: 20_000, ...(pinnedHere ? { cpu: SERVER_CPU } : {}) })), fixed: [], open: [] });
  }
  for (const server of servers) await load(server.url, { connections: 20, duration: 2, overallRate: RATE }); // warm-up: JIT, connections
  for (let round = 0; round < ROUNDS; round++) {
    // Which goes first alternates, so a burst of load from elsewhere hits both alike.
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) {
      const fixed = await measure(server, { connections: 20, duration: SECONDS, overallRate: RATE });
      server.fixed.push(fixed);
      const open = OPEN ? await measure(server, { connections: 50, duration: SECONDS }) : undefined;
      if (open) server.open.push(open);
      console.log(
        `  round ${round + 1} ${server.label.padEnd(27)} at ${fmt(RATE)}/s: ${fmt(fixed.rps)} req/s, ${fixed.cpu.toFixed(1)} µs CPU/req${open ? `; unthrottled: ${fmt(open.rps)} req/s` : ""}`,
      );
    }
  }
  const [minimal, listen] = servers;
  const cpu = (s) => s.fixed.map((r) => r.cpu);
  const achieved = (s) => spread(s.fixed.map((r) => r.rps)).median;
  const cpuRow = row(
    `listen --secret at ${fmt(RATE)} req/s, 20 connections: server CPU per request`,
    { label: "listen --secret", values: cpu(listen) },
    { label: "minimal verifier", values: cpu(minimal) },
    {
      unit: "µs",
      target: 1.15,
      lowerIsBetter: true,
      paired: true,
      extra: { achievedRps: { listen: achieved(listen), minimal: achieved(minimal) }, pinned: pinnedHere },
    },
  );
  console.log(
    `\nlisten --secret CPU/request at ${fmt(RATE)} req/s: ${withSpread(cpuRow.project)} µs vs minimal ${withSpread(cpuRow.reference)} µs: ${cpuRow.ratio.toFixed(2)}x, per-round ratios ${withSpread(cpuRow.ratioSpread, 2)} (target ≤ 1.15x); offered load reached: ${fmt(achieved(listen))} / ${fmt(achieved(minimal))} req/s`,
  );
  const rows = [cpuRow];
  if (OPEN) {
    const openRow = row(
      "listen --secret unthrottled, 50 connections: req/s",
      { label: "listen --secret", values: listen.open.map((r) => r.rps) },
      { label: "minimal verifier", values: minimal.open.map((r) => r.rps) },
      { unit: "req/s", target: 0.9, lowerIsBetter: false, paired: true },
    );
    console.log(
      `listen --secret unthrottled: ${withSpread(openRow.project)} vs minimal ${withSpread(openRow.reference)} req/s: ${openRow.ratio.toFixed(2)}x (target ≥ 0.90x)`,
    );
    rows.push(openRow);
  }
  report(rows);
} finally {
  clearTimeout(deadline);
  await Promise.all(servers.map((server) => stopChild(server.child, "SIGTERM")));
}
