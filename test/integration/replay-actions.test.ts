import { createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Target } from "../../src/config/destination.js";
import { replay } from "../../src/replay/replay.js";
import { createSelection } from "../../src/replay/select.js";
import type { ReplayOptions } from "../../src/replay/types.js";
import { seededRandom, VirtualClock } from "../../src/util/clock.js";
import { startServer, type Responder, type TestServer } from "../helpers/http-server.js";
import { runInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

/*
 * replay --destination actions --batch-size 1000 of 100,000 lines against real receivers: one
 * user's events arrive in order within and across batches, and an interrupted run's resume line,
 * followed, delivers every event at least once (docs/actions.md#batches).
 */

const { servers } = closeServersAfterEach();
const { dir, ndjson } = tempDir("replay-actions-");
const SECRET = "s3cr3t";
const LINES = 100_000;
const USERS = 700;

const lines = Array.from({ length: LINES }, (_, i) =>
  JSON.stringify({
    version: 1,
    type: "track",
    userId: `u${(i * 7919) % USERS}`,
    event: "Step",
    properties: { line: i + 1 },
    timestamp: "2024-01-01T00:00:00.000Z",
  }),
);
const path = ndjson(lines);

interface Event {
  userId: string;
  properties: { line: number };
}

async function server(respond?: Responder): Promise<TestServer> {
  const s = await startServer(respond);
  servers.push(s);
  return s;
}

function settings(url: string, batchSize = 1000): ReplayOptions["settings"] {
  const target: Target = { url, headers: {}, batchSize };
  return { targets: [target], secret: SECRET, userAgent: "Segment (Actions)", destination: "actions" };
}

const eventsOf = (body: Buffer): Event[] => JSON.parse(body.toString("utf8")) as Event[];

describe("replay in batch mode (100,000 lines, 1000 per request)", () => {
  it("keeps each user's order within and across batches, retrying some batches whole, every request signed over its first element", async () => {
    // Batch b holds lines 1000b+1 … 1000b+1000. When a request arrives, every earlier batch sharing
    // one of its users must already have had its final answer (a 2xx), as the dispatcher promises.
    const batchOf = (line: number) => Math.floor((line - 1) / 1000);
    const answered = new Set<number>();
    const lastBatchOf = new Map<string, number>();
    const violations: string[] = [];
    const random = seededRandom(1);
    const target = await server((req, res, index) => {
      const events = eventsOf(req.body);
      const batch = batchOf(events[0]?.properties.line ?? 0);
      for (const event of events) {
        const earlier = lastBatchOf.get(event.userId);
        if (earlier !== undefined && earlier < batch && !answered.has(earlier))
          violations.push(`batch ${batch} (${event.userId}) before batch ${earlier}'s answer`);
        if (earlier === undefined || earlier < batch) lastBatchOf.set(event.userId, batch);
      }
      const status = index % 9 === 4 ? 503 : 200;
      setTimeout(
        () => {
          if (status === 200) answered.add(batch);
          res.statusCode = status;
          res.end();
        },
        Math.floor(random() * 15),
      );
    });
    // Retry waits in virtual time; the requests and answers are real.
    const clock = new VirtualClock(Date.now(), { autoAdvance: true });
    const summary = await replay({ path, name: path, settings: settings(target.url), concurrency: 16, retryWindowMs: 60_000, clock });
    expect(summary).toMatchObject({ sent: LINES, delivered: LINES, failed: 0 });
    expect(summary.retried).toBeGreaterThan(0);
    expect(violations).toEqual([]);
    expect(answered.size).toBe(100);

    const delivered = new Set<number>();
    for (const request of target.requests) {
      const events = eventsOf(request.body);
      expect(events.length).toBeLessThanOrEqual(1000);
      expect(request.method).toBe("POST");
      // Within a batch, each user's events in file order.
      const seen = new Map<string, number>();
      for (const event of events) {
        expect(event.properties.line).toBeGreaterThan(seen.get(event.userId) ?? 0);
        seen.set(event.userId, event.properties.line);
        delivered.add(event.properties.line);
      }
      const first = JSON.stringify(events[0]);
      expect(request.headers["x-signature"]).toBe(createHmac("sha1", SECRET).update(first).digest("hex"));
    }
    expect(delivered.size).toBe(LINES);
  }, 60_000);

  for (const withDeadLetter of [false, true]) {
    it(`interrupted part way ${withDeadLetter ? "(with --dead-letter and a batch refused for good)" : ""}: following the resume line delivers every event at least once`, async () => {
      const controller = new AbortController();
      const delivered = new Set<number>();
      const deadLetter = withDeadLetter ? join(dir, "dead.ndjson") : undefined;
      const flaky = await server((_req, res, index) => {
        if (index === 37) controller.abort("SIGINT");
        // Some batches fail for good (400), some keep failing until the interruption (503).
        res.statusCode = withDeadLetter && index === 5 ? 400 : index % 11 === 3 ? 503 : 200;
        setTimeout(() => res.end(), index % 4);
      });
      const first = await replay({
        path,
        name: path,
        settings: settings(flaky.url),
        concurrency: 8,
        signal: controller.signal,
        ...(deadLetter ? { deadLetter } : {}),
        onMessage: (entry, result) => {
          if (result?.delivered) delivered.add(entry.line);
        },
      });
      const mark = first.resumeLine as number;
      expect(mark).toBeGreaterThan(1);
      expect(mark).toBeLessThan(LINES);
      const dead = deadLetter && existsSync(deadLetter) ? readFileSync(deadLetter, "utf8").trim().split("\n") : [];
      const deadLines = dead.map((line) => (JSON.parse(line) as { body: Event }).body.properties.line);
      if (withDeadLetter) expect(deadLines).toHaveLength(1000);
      for (let line = 1; line <= LINES; line++) {
        if (!(delivered.has(line) || deadLines.includes(line) || line >= mark)) throw new Error(`line ${line} lost (resume at ${mark})`);
      }
      expect(first.deliveredAfterResume).toBe([...delivered].filter((line) => line >= mark).length);

      const healthy = await server();
      const resumed = await replay({ path, name: path, settings: settings(healthy.url), concurrency: 8, selection: createSelection({ fromLine: mark }) });
      expect(resumed.delivered).toBe(LINES - mark + 1);
      if (deadLetter && dead.length > 0) await replay({ path: deadLetter, name: deadLetter, settings: settings(healthy.url) });
      for (const request of healthy.requests) for (const event of eventsOf(request.body)) delivered.add(event.properties.line);
      expect(delivered.size).toBe(LINES);
    }, 60_000);
  }

  it("results, JUnit, dead letters and --json stay per event; --dry-run shows the batches", async () => {
    const ten = ndjson(lines.slice(0, 10));
    const dryRun = await runInProcess(["replay", ten, "--url", "http://127.0.0.1:1/hook", "--destination", "actions", "--batch-size", "4", "--dry-run"], {
      cwd: dir,
    });
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout.match(/^# .*$/gm)).toEqual([
      `# ${ten}:1 to ${ten}:4 (batch of 4) → http://127.0.0.1:1/hook`,
      `# ${ten}:5 to ${ten}:8 (batch of 4) → http://127.0.0.1:1/hook`,
      `# ${ten}:9 to ${ten}:10 (batch of 2) → http://127.0.0.1:1/hook`,
    ]);
    expect(dryRun.stdout).toContain("User-Agent: Segment (Actions)");

    // The second batch (lines 5–8) is refused for good.
    const target = await server((req, res) => {
      res.statusCode = eventsOf(req.body)[0]?.properties.line === 5 ? 400 : 200;
      res.end();
    });
    const files = { results: join(dir, "results.ndjson"), junit: join(dir, "junit.xml"), dead: join(dir, "dead-10.ndjson") };
    const run = await runInProcess(
      [
        "replay",
        ten,
        "--url",
        target.url,
        "--destination",
        "actions",
        "--batch-size",
        "4",
        "--results",
        files.results,
        "--junit",
        files.junit,
        "--dead-letter",
        files.dead,
        "--json",
      ],
      { cwd: dir },
    );
    expect(run.code).toBe(1);
    expect(target.requests).toHaveLength(3);
    const results = readFileSync(files.results, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { line: number; delivered: boolean; urls: { status: number }[] });
    expect(results.map((r) => [r.line, r.delivered, r.urls[0]?.status])).toEqual(
      Array.from({ length: 10 }, (_, i) => [i + 1, i < 4 || i > 7, i < 4 || i > 7 ? 200 : 400]),
    );
    expect(readFileSync(files.junit, "utf8").match(/<testcase /g)).toHaveLength(10);
    expect(readFileSync(files.junit, "utf8").match(/<failure /g)).toHaveLength(4);
    const dead = readFileSync(files.dead, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { body: Event; failure: { status: number } });
    expect(dead.map((d) => [d.body.properties.line, d.failure.status])).toEqual([5, 6, 7, 8].map((line) => [line, 400]));
    const summary = JSON.parse(run.stdout.trim().split("\n").at(-1) as string) as Record<string, unknown>;
    expect(summary).toMatchObject({ event: "summary", sent: 10, delivered: 6, failed: 4, deadLettered: 4 });
  });
});
