// listen's memory ceiling (docs/receiver.md#memory): `listen --ui --forward-to` under the worst
// of what a sender, the app and the page can do at once, for MEMORY_BENCH_SECONDS (default 15):
// - 10 senders in a loop with 1 MiB bodies, two of three `[{},{},…]` (25 MB once parsed), one of
//   three nested 500 deep (500 MB if pretty-printed);
// - an app that answers each with 8 MiB;
// - 200 senders at once that leave their 8 MiB answers unread for 2 s;
// - two page clients opening rows one after another (the nested ones included);
// - 100 event streams that never read (16 are let in), and Downloads asking for row 1 a thousand
//   times over, one after another.
// Peak RSS is sampled every 20 ms; past 1.5 times the ceiling listen is killed and the run fails.
// Run it by name: `node bench/run.js memory` (after `npm run build`).
import { createServer } from "node:http";
import { connect } from "node:net";
import { readFileSync } from "node:fs";
import { Agent, request } from "undici";
import { BIN, report, row, startListening, stopChild } from "./lib.js";

const CEILING_MB = 640;
const SECONDS = Number(process.env.MEMORY_BENCH_SECONDS ?? 15);
const MIB = 1024 * 1024;

function rssMb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;
  } catch {
    return NaN; // gone
  }
}
const flat = `[${"{},".repeat(Math.floor((MIB - 2) / 3)).slice(0, -1)}]`;
const open = `${'{"a":'.repeat(499)}[`;
const close = `]${"}".repeat(499)}`;
const nested = `${open}${Array(Math.floor((MIB - open.length - close.length + 1) / 2))
  .fill("0")
  .join(",")}${close}`;

const answer = Buffer.alloc(8 * MIB, 0x61);
const app = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end(answer));
});
await new Promise((resolve) => app.listen(0, "127.0.0.1", resolve));
const appUrl = `http://127.0.0.1:${app.address().port}/webhook`;

let inspector;
const listen = await startListening(
  [BIN, "listen", "--port", "0", "--ui", "--ui-port", "0", "--forward-to", appUrl, ...(process.env.MEMORY_BENCH_ARGS ?? "").split(" ").filter(Boolean)],
  {
    timeoutMs: 20_000,
    onSpawn: (child) => (inspector = inspectorUrl(child)),
  },
);
const page = await inspector;
let peak = 0;
let over = false;
const sampler = setInterval(() => {
  const rss = rssMb(listen.child.pid);
  if (!(rss > 0)) return;
  peak = Math.max(peak, rss);
  if (rss > CEILING_MB * 1.5 && !over) {
    over = true;
    listen.child.kill("SIGKILL");
  }
}, 20);

const dispatcher = new Agent({ connections: 500 });
const statuses = {};
const count = (key) => (statuses[key] = (statuses[key] ?? 0) + 1);
const end = Date.now() + SECONDS * 1000;
let sent = 0;
const post = (body) => request(`${listen.url}/hook`, { method: "POST", dispatcher, headers: { "content-type": "application/json" }, body });

const sender = async () => {
  while (Date.now() < end && !over) {
    try {
      const response = await post(sent++ % 3 === 0 ? nested : flat);
      count(response.statusCode);
      await response.body.dump({ limit: answer.length });
    } catch (error) {
      count(error.code ?? "error");
    }
  }
};
const slowReader = async () => {
  try {
    const response = await post('{"type":"track","userId":"u","event":"E"}');
    count(`unread ${response.statusCode}`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await response.body.dump({ limit: answer.length });
  } catch (error) {
    count(error.code ?? "error");
  }
};
const viewer = async () => {
  for (let id = 1; Date.now() < end && !over; id++) {
    try {
      const response = await request(`${page}/api/requests/${id}`, { dispatcher });
      await response.body.dump({ limit: 64 * MIB });
    } catch {
      // listen was killed: the sampler says why.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

// A page that opens the live list and never reads it: only its socket's buffer may fill.
const idleStream = () =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(page);
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      socket.pause();
      resolve(socket);
    });
    socket.on("error", () => resolve(socket));
  });
const downloader = async () => {
  const ids = Array(1000).fill(1).join(",");
  while (Date.now() < end && !over) {
    try {
      const response = await request(`${page}/api/download?ids=${ids}`, { dispatcher });
      count(`download ${response.statusCode}`);
      await response.body.dump({ limit: 64 * MIB });
    } catch {
      // listen was killed: the sampler says why.
    }
  }
};

const streams = await Promise.all(Array.from({ length: 100 }, idleStream));
try {
  await Promise.all([...Array.from({ length: 10 }, sender), viewer(), viewer(), downloader(), ...Array.from({ length: 200 }, slowReader)]);
} finally {
  for (const socket of streams) socket.destroy();
  clearInterval(sampler);
  await dispatcher.close();
  await stopChild(listen.child, "SIGTERM");
  app.close();
}

console.log(`${sent} bodies of 1 MiB sent; answers: ${JSON.stringify(statuses)}`);
console.log(`listen --ui --forward-to peak RSS: ${Math.round(peak)} MB (ceiling ${CEILING_MB} MB)${over ? `: passed 1.5 times the ceiling, killed` : ""}`);
report([
  row(
    "listen --ui --forward-to, worst senders, app and page at once: peak RSS",
    { label: "listen", value: peak },
    { label: "documented ceiling", value: CEILING_MB },
    { unit: "MB", target: 1, lowerIsBetter: true },
  ),
]);
process.exitCode = over || peak > CEILING_MB ? 1 : 0;

async function inspectorUrl(child) {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`no Inspector line: ${text}`)), 15_000);
    child.stdout.on("data", (chunk) => {
      text += chunk;
      const match = /Inspector: (\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
}
