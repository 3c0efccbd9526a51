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
// 2. In the same rounds, `listen --scheme standard` verifying Standard Webhooks requests (webhook-id,
//    webhook-timestamp, webhook-signature: HMAC-SHA256 of id.timestamp.body, signed afresh each round)
//    beside `listen --secret`'s X-Signature figure: target <= 1.10x. And, shown without a target,
//    `listen` recognising the same requests by their headers (no --scheme).
// 3. With LISTEN_BENCH_OPEN=1, also unthrottled over 50 connections: req/s (target >= 0.90x the
//    minimal's). Off by default: on a shared 2-core machine it measures the machine more than listen.
import autocannon from "autocannon";
import { createHmac } from "node:crypto";
import {
  BIN,
  PIN,
  SECRET,
  cpuMs,
  formatCount as fmt,
  orderCompleted,
  pinSelf,
  report,
  row,
  shownRow,
  spread,
  startListening,
  stopChild,
  withSpread,
} from "./lib.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.LISTEN_BENCH_ROUNDS ?? 6);
const RATE = Number(process.env.LISTEN_BENCH_RATE ?? 12_000);
const OPEN = process.env.LISTEN_BENCH_OPEN === "1";
// The receivers on the last CPU, the load (this process) on the first.
const SERVER_CPU = 1;
const pinnedHere = PIN && pinSelf(0);

const body = JSON.stringify(orderCompleted("user_bench_0001", "order_5f2a9c1e"));
const signature = createHmac("sha1", SECRET).update(body).digest("hex");
// Standard Webhooks' secret: whsec_ and base64, the key its decoded bytes.
const STANDARD_SECRET = `whsec_${Buffer.from(SECRET).toString("base64")}`;

/** The headers each receiver is loaded with: X-Signature, or Standard Webhooks' signed now (a round is far under its 5 minutes). */
function signedHeaders(scheme) {
  if (scheme !== "standard") return { "x-signature": signature };
  const id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(STANDARD_SECRET.slice("whsec_".length), "base64");
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${mac}` };
}

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

function load(server, { connections, duration, overallRate }) {
  return autocannon({
    url: `${server.url}/webhook`,
    method: "POST",
    connections,
    duration,
    ...(overallRate ? { overallRate } : {}),
    headers: { "content-type": "application/json", ...signedHeaders(server.scheme), "user-agent": "Segment.io/1.0" },
    body,
  });
}

async function measure(server, options) {
  const before = cpuMs(server.child.pid);
  const result = await load(server, options);
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
  (ROUNDS * 4 * (OPEN ? 2 : 1) * (SECONDS + 1) + 60) * 1000,
);
const servers = [];
try {
  console.log(
    `body ${Buffer.byteLength(body)} B; ${ROUNDS} interleaved rounds of ${SECONDS} s per receiver at ${fmt(RATE)} req/s${OPEN ? " and unthrottled" : ""}; ${
      pinnedHere ? `receivers pinned to CPU ${SERVER_CPU}, autocannon to CPU 0` : "not pinned (no taskset, one CPU, or BENCH_PIN=0)"
    }`,
  );
  for (const [label, scheme, args] of [
    ["minimal verifying receiver", "default", ["--input-type=module", "-e", MINIMAL]],
    ["listen --secret", "default", [BIN, "listen", "--port", "0", "--secret", SECRET]],
    ["listen --scheme standard", "standard", [BIN, "listen", "--port", "0", "--scheme", "standard", "--secret", STANDARD_SECRET]],
    ["listen, standard recognised", "standard", [BIN, "listen", "--port", "0", "--secret", STANDARD_SECRET]],
  ]) {
    const started = await startListening(args, { timeoutMs: 20_000, ...(pinnedHere ? { cpu: SERVER_CPU } : {}) });
    servers.push({ label, scheme, ...started, fixed: [], open: [] });
  }
  for (const server of servers) await load(server, { connections: 20, duration: 2, overallRate: RATE }); // warm-up: JIT, connections
  for (let round = 0; round < ROUNDS; round++) {
    // The order turns each round, so a burst of load from elsewhere hits each alike.
    const order = [...servers.slice(round % servers.length), ...servers.slice(0, round % servers.length)];
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
  const [minimal, listen, standard, recognised] = servers;
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
  const standardRow = row(
    `listen --scheme standard at ${fmt(RATE)} req/s: server CPU per request, beside listen --secret (X-Signature)`,
    { label: "listen --scheme standard", values: cpu(standard) },
    { label: "listen --secret", values: cpu(listen) },
    { unit: "µs", target: 1.1, lowerIsBetter: true, paired: true, extra: { achievedRps: { standard: achieved(standard), listen: achieved(listen) } } },
  );
  const recognisedRow = shownRow(
    `listen recognising standard by its headers (no --scheme) at ${fmt(RATE)} req/s: server CPU per request, beside listen --secret`,
    { label: "listen, standard recognised", values: cpu(recognised) },
    { label: "listen --secret", values: cpu(listen) },
    { unit: "µs", target: 1.1, lowerIsBetter: true, paired: true },
  );
  for (const [what, r] of [
    ["listen --scheme standard", standardRow],
    ["listen recognising standard", recognisedRow],
  ]) {
    console.log(
      `${what} CPU/request: ${withSpread(r.project)} µs vs listen --secret ${withSpread(r.reference)} µs: ${r.ratio.toFixed(2)}x, per-round ratios ${withSpread(r.ratioSpread, 2)}${r === standardRow ? " (target ≤ 1.10x)" : ""}`,
    );
  }
  const rows = [cpuRow, standardRow, recognisedRow];
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
