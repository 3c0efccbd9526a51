// Shared by the *.bench.js files (not a benchmark itself: bench/run.js runs only *.bench.js).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../bin/webhook-cli.js", import.meta.url));
export const SECRET = "bench-secret-0123456789";

/** A bare node:http receiver (`node --input-type=module -e BARE_RECEIVER`): the ceiling of the machine. */
export const BARE_RECEIVER = `
import { createServer } from "node:http";
createServer((req, res) => { req.resume(); req.on("end", () => res.writeHead(200).end("ok")); })
  .listen(0, "127.0.0.1", function () { console.log("Listening on http://127.0.0.1:" + this.address().port); });
`;

/** A realistic track message, about 480 bytes serialized. */
export function orderCompleted(userId, orderId) {
  return {
    version: 1,
    type: "track",
    userId,
    event: "Order Completed",
    properties: {
      orderId,
      revenue: 129.95,
      currency: "USD",
      products: [
        { sku: "sku_a1b2c3d4", name: "Keyboard", price: 99.95, quantity: 1 },
        { sku: "sku_e5f6g7h8", name: "Wrist rest", price: 30, quantity: 1 },
      ],
      shipping: { method: "express", country: "NL", days: 2 },
    },
    timestamp: "2024-03-14T09:26:53.589Z",
    context: { ip: "203.0.113.7", library: { name: "analytics-node", version: "6.2.0" } },
  };
}

/** CPU time (user + system) of a process from /proc, in ms, or undefined: steadier than wall time on a shared, loaded machine. */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Spawns `node ARGS` and resolves with `{ child, url, stderr() }` at its
 * "Listening on URL" line. Its stdout keeps being drained (listen prints a line
 * per request) so the pipe never blocks it; stderr is inherited unless `pipeStderr`.
 * `onSpawn` sees the child at once (to kill it even when it never listens).
 */
export function startListening(args, { label = args.join(" "), pipeStderr = false, timeoutMs = 20_000, onSpawn } = {}) {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", pipeStderr ? "pipe" : "inherit"], env: { ...process.env, NO_COLOR: "1", CI: "1" } });
  onSpawn?.(child);
  let stderr = "";
  child.stderr?.on("data", (c) => (stderr += c));
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error(`no Listening line from ${label}${stderr ? `: ${stderr}` : ""}`)), timeoutMs);
    const onData = (chunk) => {
      buffer += chunk;
      const match = /Listening on (\S+)/.exec(buffer);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.stdout.resume();
      resolve({ child, url: match[1], stderr: () => stderr });
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code}) before listening`));
    });
  });
}

/** Stops a child with `signal` (SIGKILL after 10 s) and waits for its exit. */
export async function stopChild(child, signal = "SIGINT") {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

export const formatCount = (n) => Math.round(n).toLocaleString("en-US");
