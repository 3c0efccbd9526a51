import type { ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Analytics } from "../../src/client/analytics.js";
import { collect, spawnCli, waitForLine } from "../helpers/cli.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { killChildrenAfterEach } from "../helpers/setup.js";

/*
 * serve --destination actions --batch-size N, killed hard mid-run: an event is marked delivered
 * only once its batch got a 2xx, so the restarted serve resends what was not, and loses nothing
 * (docs/actions.md#batches). As the single-message durability test in serve.test.ts, with batches.
 */

const SECRET = "e2e-secret";
const dirs: string[] = [];
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const children = killChildrenAfterEach();

async function start(args: string[]): Promise<{ child: ChildProcess; url: string; done: ReturnType<typeof collect> }> {
  const child = spawnCli(args);
  children.push(child);
  const done = collect(child, 60_000);
  const [, url] = await waitForLine(child, /Listening on (http\S+)/, 15_000);
  return { child, url: url as string, done };
}

interface Event {
  userId: string;
  properties: { seq: number };
}
const eventsOf = (body: Buffer): Event[] => JSON.parse(body.toString("utf8")) as Event[];

describe("serve --destination actions with batches (built CLI)", { tags: ["smoke"] }, () => {
  it("SIGKILL while the receiver answers 503, restart with a healthy one: every event arrives, none accepted before is resent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-serve-actions-"));
    dirs.push(dir);
    const total = 60;
    // The first receiver takes three batches, then answers 503 to everything.
    const accepted: number[] = [];
    const sick = await startServer((req, res, index) => {
      res.statusCode = index < 3 ? 200 : 503;
      if (index < 3) for (const event of eventsOf(req.body)) accepted.push(event.properties.seq);
      res.end();
    });
    const healthy = await startServer();
    servers.push(sick, healthy);
    const serveArgs = (url: string) => [
      "serve",
      "--port",
      "0",
      "--write-key",
      "wk_e2e",
      "--url",
      `${url}/hook`,
      "--secret",
      SECRET,
      "--state",
      join(dir, "state"),
      "--destination",
      "actions",
      "--batch-size",
      "5",
      "--batch-wait",
      "100ms",
      "--method",
      "PUT",
      "--retry-window",
      "1h",
      "--concurrency",
      "4",
    ];
    const first = await start(serveArgs(sick.url));
    const client = new Analytics("wk_e2e", { endpoint: first.url, flushAt: 10, flushAfter: 50, maxRetries: 5 });
    for (let seq = 0; seq < total; seq++) client.track({ userId: `user-${seq}`, event: "Numbered", properties: { seq } });
    await client.close();

    await expect.poll(() => sick.requests.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3 + 8);
    first.child.kill("SIGKILL");
    expect((await first.done).signal).toBe("SIGKILL");
    expect(accepted).toHaveLength(15);

    const second = await start(serveArgs(healthy.url));
    const health = async () => (await (await fetch(`${second.url}/health`)).json()) as Record<string, number>;
    await expect.poll(async () => (await health()).pending, { timeout: 20_000 }).toBe(0);
    expect(await health()).toMatchObject({ delivered: total - accepted.length, pending: 0, failed: 0 });

    const resent = healthy.requests.flatMap((request) => eventsOf(request.body).map((event) => event.properties.seq));
    for (const seq of resent) expect(accepted).not.toContain(seq);
    expect(new Set([...accepted, ...resent]).size).toBe(total);
    for (const request of healthy.requests) {
      const events = eventsOf(request.body);
      expect(request.method).toBe("PUT");
      expect(events.length).toBeLessThanOrEqual(5);
      expect(request.headers["user-agent"]).toBe("Segment (Actions)");
      expect(request.headers["x-signature"]).toBe(createHmac("sha1", SECRET).update(JSON.stringify(events[0])).digest("hex"));
    }

    second.child.kill("SIGTERM");
    expect((await second.done).code).toBe(0);
  }, 60_000);
});
