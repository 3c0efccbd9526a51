import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, spawnCli, waitForLine } from "../helpers/cli.js";
import { cpuMsOf } from "../helpers/cpu-time.js";
import { rssNow, watchRss } from "../helpers/memory.js";
import { killChildrenAfterEach } from "../helpers/setup.js";

/*
 * What compressed bombs cost serve, measured in serve's own process (the built CLI), where no other
 * test's garbage lands: its RSS and its CPU time. What the inflater and the body reader hand on
 * and take is checked in test/unit/inflate.test.ts and test/unit/body-reader.test.ts.
 */

const AUTH = { authorization: `Basic ${Buffer.from("wk:").toString("base64")}` };
let dir: string;
const children = killChildrenAfterEach();
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-inflate-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function startServe(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnCli(["serve", "--port", "0", "--write-key", "wk", "--memory"], { cwd: dir });
  children.push(child);
  void collect(child, 90_000).catch(() => {});
  const [, url] = await waitForLine(child, /Listening on (http\S+)/, 15_000);
  return { url: url as string, child };
}

async function post(url: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<{ status: number; code: unknown }> {
  const response = await request(url, { method: "POST", headers: { ...AUTH, "content-type": "text/plain", ...headers }, body });
  const json = (await response.body.json()) as { code?: unknown };
  return { status: response.statusCode, code: json.code };
}

describe("serve under gzip bombs", { tags: ["smoke"] }, () => {
  it("eight bombs of 64 MiB at once are each a 400 request_too_large; serve's RSS and CPU stay flat", { timeout: 60_000 }, async () => {
    const { url, child } = await startServe();
    const pid = child.pid as number;
    const track = JSON.stringify({ userId: "u", event: "E" });
    expect((await post(`${url}/v1/track`, track, { "content-type": "application/json" })).status).toBe(200);
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, " "));
    expect(bomb.length).toBeLessThan(128 * 1024);
    const baseline = rssNow(pid);
    const rss = watchRss(pid, baseline + 512);
    const cpuBefore = cpuMsOf(pid);
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(`${url}/v1/b`, bomb, { "content-encoding": "gzip" })));
    const cpu = cpuMsOf(pid) - cpuBefore;
    rss.stop();
    expect(answers).toEqual(Array(8).fill({ status: 400, code: "request_too_large" }));
    console.log(`8 gzip bombs: serve's RSS ${Math.round(baseline)} → peak ${Math.round(rss.peak)} MB, CPU ${cpu} ms`);
    // Inflated whole, the eight would add 512 MB and cost seconds of zlib; stopped at the limit, each
    // costs one 500 KB body and a zlib chunk.
    expect(rss.peak - baseline).toBeLessThan(48);
    expect(cpu).toBeLessThan(1_000);
  });
});
