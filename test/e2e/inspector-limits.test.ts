import type { ChildProcess } from "node:child_process";
import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { collect, spawnCli, waitForLine } from "../helpers/cli.js";
import { killChildrenAfterEach } from "../helpers/setup.js";
import { rssMb } from "../helpers/slow-upload.js";

// The inspector's API under clients that never read and requests built to cost memory. Each test measures
// the RSS growth of `listen --ui` over its own baseline (taken once the rows are stored) and stops, failing,
// as soon as the growth passes 1.5x its bound, so a regression never takes the machine to gigabytes.
// docs/receiver.md#inspector-limits documents the bounds.

/**
 * Event streams: 16 clients at most, each holding at most one event (about 80 KB) past its socket's
 * buffer; the growth also holds the 10 rows of 400 KB added meanwhile (about 12 MB kept by the history).
 * Measured on Node 20: +15 MB with the 100 clients, +34 MB peak. Before: about +90 MB per client (each
 * got every row's 400 KB summary at once: +289 MB for 3 clients), so the first client passed the limit.
 */
const STREAM_GROWTH_MB = 64;
/** Download: one recording line at a time, whatever the id list. Measured: +6 MB. Before: +1 MiB per id, stopped at +96 MB. */
const DOWNLOAD_GROWTH_MB = 64;
const STREAM_CAP = 16;

const children = killChildrenAfterEach();

async function listenUi(): Promise<{ child: ChildProcess; receiver: string; inspector: string }> {
  const child = spawnCli(["listen", "--port", "0", "--ui", "--ui-port", "0"]);
  children.push(child);
  void collect(child, 120_000).catch(() => {});
  const [, receiver, inspector] = await waitForLine(child, /Listening on (\S+)[\s\S]*Inspector: (\S+)/, 15_000);
  return { child, receiver: receiver as string, inspector: inspector as string };
}

async function post(url: string, body: string): Promise<number> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  await response.body.dump();
  return response.statusCode;
}

/** A track message of about `bytes` bytes, all of it in the fields the row list shows (user and event name). */
function bigFields(bytes: number, n: number): string {
  const half = Math.floor(bytes / 2);
  return JSON.stringify({
    version: 1,
    type: "track",
    userId: `${n}`.padEnd(half, "u"),
    event: "E".repeat(half),
    properties: {},
    timestamp: "2024-01-01T00:00:00.000Z",
  });
}

/** Opens GET /api/events, reads the first chunk (the answer's head) and then never reads again. */
function idleStream(inspector: string): Promise<{ socket: Socket; head: string }> {
  const { hostname, port } = new URL(inspector);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET /api/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`);
    });
    socket.once("error", reject);
    socket.once("close", () => reject(new Error("the inspector closed an event stream before answering")));
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      resolve({ socket, head: chunk.toString("latin1") });
    });
  });
}

/** Fails the test (and kills listen) as soon as RSS passes `limitMb`; `check()` also runs on demand. */
function rssGuard(child: ChildProcess, limitMb: number): { peak: () => number; check: () => Promise<void>; stop: () => void } {
  let peak = 0;
  let failure: Error | undefined;
  const check = async (): Promise<void> => {
    if (failure) throw failure;
    const rss = await rssMb(child.pid as number).catch(() => NaN);
    if (!Number.isNaN(rss)) peak = Math.max(peak, rss);
    if (rss > limitMb) {
      failure = new Error(`listen's RSS reached ${Math.round(rss)} MB, past the ${Math.round(limitMb)} MB limit: stopped`);
      child.kill("SIGKILL");
      throw failure;
    }
  };
  const timer = setInterval(() => void check().catch(() => {}), 50);
  return { peak: () => peak, check, stop: () => clearInterval(timer) };
}

describe("inspector limits (listen --ui)", { tags: ["smoke"] }, () => {
  it(`the event stream takes ${STREAM_CAP} clients and refuses the next ones by name; clients that never read cost bounded memory`, async () => {
    const { child, receiver, inspector } = await listenUi();
    // 100 rows of 400 KB whose user and event name alone are 400 KB: what the row list shows.
    for (let n = 1; n <= 100; n++) expect(await post(`${receiver}/hook`, bigFields(400_000, n))).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const baseline = await rssMb(child.pid as number);
    const guard = rssGuard(child, baseline + 1.5 * STREAM_GROWTH_MB);
    const opened: { socket: Socket; head: string }[] = [];
    try {
      for (let i = 0; i < 100; i++) {
        // A stream cut by the guard's kill reports the guard's reason.
        opened.push(
          await idleStream(inspector).catch(async (error: unknown) => {
            await guard.check();
            throw error;
          }),
        );
        await guard.check();
      }
      console.log(`event streams: ${Math.round((await rssMb(child.pid as number)) - baseline)} MB over the baseline with 100 clients`);
      // New rows while every client is stalled.
      for (let n = 101; n <= 110; n++) {
        expect(await post(`${receiver}/hook`, bigFields(400_000, n))).toBe(200);
        await guard.check();
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      await guard.check();
    } finally {
      guard.stop();
      for (const { socket } of opened) socket.destroy();
    }
    const growth = guard.peak() - baseline;
    console.log(`event streams: baseline ${Math.round(baseline)} MB, peak ${Math.round(guard.peak())} MB, growth ${Math.round(growth)} MB`);
    expect(growth).toBeLessThan(STREAM_GROWTH_MB);
    const accepted = opened.filter(({ head }) => head.startsWith("HTTP/1.1 200 "));
    const refused = opened.filter(({ head }) => head.startsWith("HTTP/1.1 503 "));
    expect(accepted).toHaveLength(STREAM_CAP);
    expect(refused).toHaveLength(100 - STREAM_CAP);
    const head = refused[0]?.head ?? "";
    const body = JSON.parse(head.slice(head.indexOf("{"), head.lastIndexOf("}") + 1)) as { error?: string };
    expect(body.error).toContain("too many inspector tabs open");
    expect(body.error).toContain(String(STREAM_CAP));
  }, 90_000);

  it("Download writes each kept row once, whatever the id list repeats; a 14 KB list of one id costs no memory", async () => {
    const { child, receiver, inspector } = await listenUi();
    const big = JSON.stringify({
      version: 1,
      type: "track",
      userId: "u",
      event: "E",
      properties: { blob: "x".repeat(1_040_000) },
      timestamp: "2024-01-01T00:00:00.000Z",
    });
    expect(await post(`${receiver}/hook`, big)).toBe(200);
    expect(await post(`${receiver}/hook`, bigFields(1000, 2))).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const baseline = await rssMb(child.pid as number);
    const guard = rssGuard(child, baseline + 1.5 * DOWNLOAD_GROWTH_MB);
    try {
      const ids = Array.from({ length: 7_000 }, () => "1").join(",");
      const huge = await download(`${inspector}/api/download?ids=${ids}`, guard.check);
      expect(huge.status).toBe(200);
      expect(huge.lines).toBe(1);
      const mixed = await download(`${inspector}/api/download?ids=2,1,2,1,1,2,99`, guard.check);
      expect(mixed.lines).toBe(2);
      expect(mixed.text.split("\n")[0]).toContain('"blob"');
      await guard.check();
    } finally {
      guard.stop();
    }
    const growth = guard.peak() - baseline;
    console.log(`download: baseline ${Math.round(baseline)} MB, peak ${Math.round(guard.peak())} MB, growth ${Math.round(growth)} MB`);
    expect(growth).toBeLessThan(DOWNLOAD_GROWTH_MB);
  }, 60_000);
});

/** GET with node:http, reading the answer as it comes and checking RSS meanwhile; counts the NDJSON lines. */
function download(url: string, check: () => Promise<void>): Promise<{ status: number; lines: number; text: string }> {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => void check().catch((error: unknown) => finish(error)), 50);
    const finish = (error: unknown, value?: { status: number; lines: number; text: string }): void => {
      clearInterval(timer);
      req.destroy();
      if (value) resolve(value);
      else reject(error instanceof Error ? error : new Error(String(error)));
    };
    const req = httpRequest(url, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => finish(undefined, { status: res.statusCode ?? 0, lines: text.split("\n").filter((line) => line !== "").length, text }));
      res.on("error", (error) => finish(error));
    });
    req.on("error", (error) => finish(error));
    req.end();
  });
}
