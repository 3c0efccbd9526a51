import { spawn } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { collect } from "../helpers/cli.js";
import { startServer, statuses, type TestServer } from "../helpers/http-server.js";

// The library as a host process sees it: the BUILT package (run `npm run build` first), in its own process.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIST = pathToFileURL(`${ROOT}dist/index.js`).href;

function runNode(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, DEBUG: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  return collect(child, 15_000);
}

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe("Analytics in a host process (built package)", () => {
  it("examples/basic.mjs runs against a loopback server and exits by itself", async () => {
    const s = await startServer();
    servers.push(s);
    const result = await runNode(["examples/basic.mjs"], { ANALYTICS_ENDPOINT: s.url, ANALYTICS_WRITE_KEY: "wk_example" });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("rejected at once: You must pass 'event'.");
    expect(result.stdout).toContain("alias delivered");
    expect(result.stdout).toContain("delivered a batch of 5 (HTTP 200)");
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from("wk_example:").toString("base64")}`);
    const body = JSON.parse(s.requests[0]!.body.toString()) as { batch: { type: string }[] };
    expect(body.batch.map((m) => m.type)).toEqual(["identify", "track", "page", "group", "alias"]);
  });

  it("the flush timer does not keep the process alive", async () => {
    const s = await startServer();
    servers.push(s);
    // A process the timer held would end only after it fired, having sent its batch: the bound is the timer, not the machine's speed.
    const flushAfter = 60_000;
    const script = `
      import { Analytics } from ${JSON.stringify(DIST)};
      const a = new Analytics("k", { endpoint: ${JSON.stringify(s.url)}, flushAfter: ${flushAfter} });
      a.track({ userId: "u", event: "E" });
      console.log("done");`;
    const result = await runNode(["--input-type=module", "-e", script]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("done\n");
    // Not closed, so the message was never sent (the documented cost of skipping close()); and not sent by the
    // timer either, which a process it held would have waited for.
    expect(s.requests).toHaveLength(0);
  }, 90_000);

  it("an awaited flush() completes across an unref'd retry wait, and DEBUG=analytics logs to stderr", async () => {
    const s = await startServer(statuses(503, 200));
    servers.push(s);
    const script = `
      import { Analytics } from ${JSON.stringify(DIST)};
      const a = new Analytics("k", { endpoint: ${JSON.stringify(s.url)}, random: () => 1 });
      a.track({ userId: "u", event: "E" }, (err) => console.log(err ? "failed" : "delivered"));
      await a.flush();
      console.log("flushed");`;
    const result = await runNode(["--input-type=module", "-e", script], { DEBUG: "analytics" });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("delivered\nflushed\n");
    expect(s.requests).toHaveLength(2);
    expect(result.stderr).toMatch(/analytics: queued track/);
    expect(result.stderr).toMatch(/analytics: batch .* failed \(HTTP 503\); retrying in 100 ms/);
  });

  it("without DEBUG, a failure nobody listens for goes to stderr once and the host keeps running", async () => {
    const s = await startServer(statuses(400));
    servers.push(s);
    const script = `
      import { Analytics } from ${JSON.stringify(DIST)};
      const a = new Analytics("k", { endpoint: ${JSON.stringify(s.url)} });
      a.identify({ userId: "u" });
      await a.close();
      console.log("still running");`;
    const result = await runNode(["--input-type=module", "-e", script]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("still running\n");
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/^analytics: Failed to send a batch of 1 message\(s\) .* after 1 attempt\(s\): HTTP 400/);
  });
});
