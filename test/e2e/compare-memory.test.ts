import type { ChildProcess } from "node:child_process";
import { closeSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { collect, spawnCli, type CliResult } from "../helpers/cli.js";
import { closeServersAfterEach, killChildrenAfterEach, tempDir } from "../helpers/setup.js";
import { rssMb } from "../helpers/slow-upload.js";

// Run `npm run build` first: this spawns the built CLI.
const { server } = closeServersAfterEach();
const children = killChildrenAfterEach();
const { dir, ndjson } = tempDir("compare-memory-e2e-");

// What --compare may add to a replay of the same line without it, whatever the old file's size.
const GROWTH_BOUND_MB = 50;
const OLD_BYTES = 157e6;

/** An answer body of about 1 KB, as a receiver's JSON. */
function answer(line: number, total: number): string {
  return JSON.stringify({ line, total, items: Array.from({ length: 24 }, (_, i) => ({ id: i, sku: `sku-${line}-${i}` })) });
}

/** A results line as an earlier `replay --results` wrote it. */
function resultsLine(line: number): string {
  const url = { url: "http://127.0.0.1:1/hook", status: 200, attempts: 1, ms: 1.5, error: null, contentType: "application/json", body: answer(line, 10) };
  return `${JSON.stringify({ line, messageId: `m-${line}`, type: "track", event: "Order Completed", userId: `u${line % 5}`, delivered: true, urls: [url] })}\n`;
}

/** A results file of at least `bytes`, streamed to disk in 4 MB writes; returns its line count. */
function writeOld(path: string, bytes: number): number {
  // Built once and numbered by replacing: JSON.stringify per line would take most of the test's time.
  const template = resultsLine(999_999_999);
  const fd = openSync(path, "w");
  let line = 0;
  let written = 0;
  try {
    while (written < bytes) {
      const lines: string[] = [];
      for (let size = 0; size < 4e6; size += template.length) {
        line += 1;
        lines.push(template.replaceAll("999999999", String(line)));
      }
      written += writeSync(fd, lines.join(""));
    }
  } finally {
    closeSync(fd);
  }
  return line;
}

/** Runs the CLI to its end, polling its RSS; past `killAboveMb` it is killed at once, so a regression never reaches gigabytes. */
async function runWatched(args: string[], killAboveMb: number): Promise<CliResult & { peakMb: number; killed: boolean }> {
  const child: ChildProcess = spawnCli(args);
  children.push(child);
  const done = collect(child, 30_000);
  let peakMb = 0;
  let killed = false;
  let running = true;
  const watching = (async () => {
    while (running) {
      // NaN once it has exited (no VmRSS left), 0 when /proc has no entry.
      const rss = await rssMb(child.pid as number).catch(() => 0);
      if (rss > peakMb) peakMb = rss;
      if (rss > killAboveMb && !killed) {
        killed = true;
        child.kill("SIGKILL");
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const result = await done;
  running = false;
  await watching;
  return { ...result, peakMb, killed };
}

describe("replay --compare against a large old file", { tags: ["smoke"] }, () => {
  it("replays one line against a 157 MB results file with memory that does not grow with it, and compares it right", async () => {
    const old = join(dir, "old.ndjson");
    const lines = writeOld(old, OLD_BYTES);
    expect(statSync(old).size).toBeGreaterThan(OLD_BYTES);
    const input = ndjson([
      JSON.stringify({
        version: 1,
        type: "track",
        event: "Order Completed",
        userId: "u1",
        messageId: "m-1",
        properties: {},
        timestamp: "2026-01-01T00:00:00.000Z",
      }),
      JSON.stringify({
        version: 1,
        type: "track",
        event: "Order Completed",
        userId: "u2",
        messageId: "m-2",
        properties: {},
        timestamp: "2026-01-01T00:00:01.000Z",
      }),
    ]);
    // The new build: line 1's total went from 10 to 12.
    const target = await server((request, res) => {
      const { messageId } = JSON.parse(request.body.toString()) as { messageId: string };
      res.setHeader("content-type", "application/json");
      res.end(answer(Number(messageId.slice(2)), 12));
    });
    const args = ["replay", input, "--url", target.url, "--retry-window", "0s", "--line", "1"];

    const plain = await runWatched(args, 1_000);
    expect(plain.code, plain.stderr).toBe(0);
    const boundMb = plain.peakMb + GROWTH_BOUND_MB;

    const compared = await runWatched([...args, "--compare", old], boundMb * 1.5);
    console.log(
      `replay --line 1 peak RSS: ${Math.round(plain.peakMb)} MB alone, ${Math.round(compared.peakMb)} MB with --compare of ${lines} lines (${Math.round(OLD_BYTES / 1e6)} MB)`,
    );
    expect(compared.killed, `RSS passed ${Math.round(boundMb * 1.5)} MB`).toBe(false);
    expect(compared.peakMb).toBeLessThan(boundMb);
    expect(compared.stdout).toContain("≠ line 1 (track Order Completed, u1): body $.total: 10 → 12");
    // Only line 1 is in this run's scope: the other old lines are not missing from it.
    expect(compared.stdout).toContain(`compared with ${old}: 0 same, 1 changed, 0 new, 0 missing`);
    expect(compared.code).toBe(1);
  }, 60_000);
});
