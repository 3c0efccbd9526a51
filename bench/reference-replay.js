// The replay reference: a minimal undici Pool loop that reads an NDJSON file's lines,
// signs each with HMAC-SHA1 and POSTs it, 64 at a time. Nothing else: no validation, no order,
// no retries, no report. Usage: node bench/reference-replay.js FILE URL SECRET CONCURRENCY
import { createHmac } from "node:crypto";
import { createReadStream } from "node:fs";
import { Pool } from "undici";

const [file, url, secret, concurrency = "64"] = process.argv.slice(2);
const target = new URL(url);
const pool = new Pool(target.origin, { connections: Number(concurrency) });

async function* lines() {
  let rest = "";
  for await (const chunk of createReadStream(file, { encoding: "utf8", highWaterMark: 64 * 1024 })) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop();
    for (const line of parts) if (line !== "") yield line;
  }
  if (rest !== "") yield rest;
}

let sent = 0;
let delivered = 0;
const source = lines();
async function worker() {
  for await (const body of source) {
    sent += 1;
    const signature = createHmac("sha1", secret).update(body).digest("hex");
    const response = await pool.request({
      path: target.pathname,
      method: "POST",
      headers: { "user-agent": "Segment.io/1.0", "content-type": "application/json", "x-signature": signature },
      body,
    });
    await response.body.dump();
    if (response.statusCode >= 200 && response.statusCode < 300) delivered += 1;
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
await pool.close();
console.log(JSON.stringify({ event: "summary", sent, delivered }));
