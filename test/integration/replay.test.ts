import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { replay } from "../../src/replay/replay.js";
import { createSelection } from "../../src/replay/select.js";
import type { ReplayOptions } from "../../src/replay/types.js";
import { sign } from "../../src/signing/x-signature.js";
import { VirtualClock } from "../../src/util/clock.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const { servers } = closeServersAfterEach();

const { dir, ndjson: file } = tempDir("replay-int-");

function track(userId: string, seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { version: 1, type: "track", userId, event: "Step", properties: { seq, ...extra }, timestamp: "2024-01-01T00:00:00.000Z" };
}

function options(path: string, server: TestServer, rest: Partial<ReplayOptions> = {}): ReplayOptions {
  return { path, name: path, settings: { targets: [{ url: `${server.url}/hook`, headers: {} }], secret: "replay-secret", userAgent: "test" }, ...rest };
}

/** A receiver that answers 503 to the user "stuck" and 200 to everyone else. */
async function stuckUserServer(): Promise<TestServer> {
  const server = await startServer((req, res) => {
    const userId = (JSON.parse(req.body.toString()) as { userId: string }).userId;
    res.statusCode = userId === "stuck" ? 503 : 200;
    res.end();
  });
  servers.push(server);
  return server;
}

/** Replays at concurrency 4 and aborts once `others` messages of users other than "stuck" arrived. */
async function abortWhenOthersAreThrough(server: TestServer, path: string, rest: Partial<ReplayOptions>, others: number) {
  const controller = new AbortController();
  // A clock that never moves by itself: "stuck" waits for its retry until the abort, whatever the jitter.
  const clock = new VirtualClock(Date.now());
  const run = replay(options(path, server, { ...rest, concurrency: 4, signal: controller.signal, clock }));
  // Wait until every other user's messages are through while "stuck" waits to retry (4 h window).
  const sentOk = (): number => server.requests.filter((r) => !r.body.toString().includes('"stuck"')).length;
  await expect.poll(sentOk, { interval: 10 }).toBeGreaterThanOrEqual(others);
  controller.abort("SIGINT");
  return run;
}

const seqOf = (body: Buffer): number => (JSON.parse(body.toString()) as { properties: { seq: number } }).properties.seq;

describe("replay (library)", () => {
  it("sends nothing when line 3 is bad, naming line 3", async () => {
    const server = await startServer();
    servers.push(server);
    const path = file([JSON.stringify(track("u", 1)), JSON.stringify(track("u", 2)), '{"type":"track","userId":', JSON.stringify(track("u", 4))]);
    const invalid: [number, string][] = [];
    const error = await replay(options(path, server, { onInvalid: (line, reason) => invalid.push([line, reason]) })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect(invalid).toEqual([[3, expect.stringMatching(/^not JSON/)]]);
    expect(server.requests).toHaveLength(0);
  });

  it("--skip-invalid sends the rest and lists the skipped lines", async () => {
    const server = await startServer();
    servers.push(server);
    const path = file([JSON.stringify(track("u", 1)), "", '{"type":"nope"}', JSON.stringify(track("u", 4))]);
    const invalid: number[] = [];
    const summary = await replay(options(path, server, { skipInvalid: true, onInvalid: (line) => invalid.push(line) }));
    expect(invalid).toEqual([3]);
    expect(summary).toMatchObject({ lines: 4, invalid: 1, sent: 2, delivered: 2, failed: 0 });
    expect(server.requests.map((r) => seqOf(r.body))).toEqual([1, 4]);
  });

  it("sends the exact bytes, re-signed with the replay's secret", async () => {
    const server = await startServer();
    servers.push(server);
    const raw = Buffer.from('{"version":1, "type":"track","userId":"u\\u00e9","event":"E","properties":{"n":1.50},"timestamp":"2024-01-01T00:00:00.000Z"}');
    const envelope = {
      receivedAt: "2024-01-01T00:00:00.000Z",
      method: "POST",
      path: "/",
      headers: {},
      signatureValid: true,
      body: JSON.parse(raw.toString()),
      rawBody: raw.toString("base64"),
    };
    const summary = await replay(options(file([JSON.stringify(envelope)]), server));
    expect(summary.delivered).toBe(1);
    const request = server.requests[0];
    expect(request?.body.equals(raw)).toBe(true);
    expect(request?.headers["x-signature"]).toBe(sign("replay-secret", raw));
  });

  it("keeps each user's messages in file order at concurrency 32 against a receiver with random delays", async () => {
    let inFlight = 0;
    let peak = 0;
    const server = await startServer((_req, res) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      setTimeout(
        () => {
          inFlight -= 1;
          res.end();
        },
        Math.floor(Math.random() * 15),
      );
    });
    servers.push(server);
    const lines: string[] = [];
    for (let seq = 0; seq < 600; seq++) lines.push(JSON.stringify(track(`user-${seq % 40}`, seq)));
    const summary = await replay(options(file(lines), server, { concurrency: 32 }));
    expect(summary).toMatchObject({ sent: 600, delivered: 600 });
    expect(peak).toBeGreaterThan(8);
    const byUser = new Map<string, number[]>();
    for (const request of server.requests) {
      const body = JSON.parse(request.body.toString()) as { userId: string; properties: { seq: number } };
      byUser.set(body.userId, [...(byUser.get(body.userId) ?? []), body.properties.seq]);
    }
    expect(byUser.size).toBe(40);
    for (const seqs of byUser.values()) {
      expect(seqs).toHaveLength(15);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });

  it("dead-letters exactly the failed messages, and the dead-letter file replays cleanly", async () => {
    // Users "bad-*" are refused (permanent 400); one user gets 503 until the short retry window closes.
    const failing = await startServer((req, res) => {
      const userId = (JSON.parse(req.body.toString()) as { userId: string }).userId;
      res.statusCode = userId.startsWith("bad-") ? 400 : userId === "flaky" ? 503 : 200;
      res.end();
    });
    servers.push(failing);
    const lines: string[] = [];
    const expectedFailed: number[] = [];
    for (let seq = 0; seq < 60; seq++) {
      const userId = seq % 10 === 3 ? `bad-${seq}` : seq === 20 ? "flaky" : `ok-${seq % 7}`;
      if (userId !== `ok-${seq % 7}`) expectedFailed.push(seq);
      lines.push(JSON.stringify(track(userId, seq, { note: "  spaced\tout  " })));
    }
    const deadLetter = join(dir, "dead.ndjson");
    const failures: number[] = [];
    const summary = await replay(
      options(file(lines), failing, { deadLetter, concurrency: 8, retryWindowMs: 300, onFailure: (entry) => failures.push(entry.line) }),
    );
    expect(summary).toMatchObject({ sent: 60, delivered: 60 - expectedFailed.length, failed: expectedFailed.length, deadLettered: expectedFailed.length });
    const dead = readFileSync(deadLetter, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { body: { properties: { seq: number } }; failure: { reason: string; attempts: number; status: number } });
    expect(dead.map((d) => d.body.properties.seq).sort((a, b) => a - b)).toEqual(expectedFailed);
    const flaky = dead.find((d) => d.body.properties.seq === 20);
    expect(flaky?.failure.status).toBe(503);
    expect(flaky?.failure.reason).toContain("503");
    expect(flaky?.failure.attempts).toBeGreaterThanOrEqual(1);
    expect(dead.find((d) => d.body.properties.seq === 3)?.failure).toEqual({ reason: expect.stringContaining("400"), attempts: 1, status: 400 });

    const healthy = await startServer();
    servers.push(healthy);
    const again = await replay(options(deadLetter, healthy, { name: "dead.ndjson" }));
    expect(again).toMatchObject({ invalid: 0, sent: expectedFailed.length, delivered: expectedFailed.length, failed: 0 });
    const original = new Map(lines.map((l) => [seqOf(Buffer.from(l)), JSON.stringify(JSON.parse(l))]));
    for (const request of healthy.requests) expect(request.body.toString()).toBe(original.get(seqOf(request.body)));
  });

  it("delivers when one of several URLs answers 2xx", async () => {
    const down = await startServer((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    const up = await startServer();
    servers.push(down, up);
    const path = file([JSON.stringify(track("u", 1)), JSON.stringify(track("v", 2))]);
    const summary = await replay({
      path,
      name: path,
      settings: {
        targets: [
          { url: down.url, headers: {} },
          { url: up.url, headers: { "X-Env": "ci" } },
        ],
        secret: undefined,
        userAgent: "test",
      },
      retryWindowMs: 1000,
    });
    expect(summary).toMatchObject({ delivered: 2, failed: 0, retried: 0 });
    expect(up.requests[0]?.headers["x-env"]).toBe("ci");
    expect(up.requests[0]?.headers["x-signature"]).toBeUndefined();
    expect(down.requests).toHaveLength(2);
  });

  it("filters by --type and starts at --from-line", async () => {
    const server = await startServer();
    servers.push(server);
    const identify = { version: 1, type: "identify", userId: "u", traits: {}, timestamp: "2024-01-01T00:00:00.000Z" };
    const path = file([
      JSON.stringify(track("u", 1)),
      JSON.stringify(identify),
      "not json but before --from-line",
      JSON.stringify(track("u", 4)),
      JSON.stringify(identify),
    ]);
    const summary = await replay(options(path, server, { selection: createSelection({ fromLine: 4, types: ["track"] }) }));
    expect(summary).toMatchObject({ messages: 1, filtered: 1, sent: 1, delivered: 1 });
    expect(server.requests.map((r) => seqOf(r.body))).toEqual([4]);
  });

  it("--dry-run validates and counts, sending nothing", async () => {
    const server = await startServer();
    servers.push(server);
    const summary = await replay(options(file([JSON.stringify(track("u", 1)), JSON.stringify(track("u", 2))]), server, { dryRun: true }));
    expect(summary).toMatchObject({ messages: 2, sent: 0, dryRun: true });
    expect(server.requests).toHaveLength(0);
  });

  it("on abort without --dead-letter, the resume line is the low-water mark: the stuck line, with the later deliveries counted", async () => {
    const server = await stuckUserServer();
    const lines = [JSON.stringify(track("free-0", 0)), JSON.stringify(track("stuck", 1)), JSON.stringify(track("stuck", 2))];
    for (let seq = 3; seq < 40; seq++) lines.push(JSON.stringify(track(`free-${seq % 5}`, seq)));
    const summary = await abortWhenOthersAreThrough(server, file(lines), {}, 38);
    // Line 1 was delivered; line 2 (stuck, in flight) is the lowest line not done; lines 4–40 were delivered after it.
    expect(summary).toMatchObject({ delivered: 38, failed: 0, interrupted: 2, deadLettered: 0, resumeLine: 2, deliveredAfterResume: 37 });
  });

  it("on abort with --dead-letter, a message waiting to retry is NOT dead-lettered: the resume line is the low-water mark", async () => {
    const server = await stuckUserServer();
    const lines = [JSON.stringify(track("stuck", 0)), JSON.stringify(track("stuck", 1))];
    for (let seq = 2; seq < 40; seq++) lines.push(JSON.stringify(track(`free-${seq % 5}`, seq)));
    const deadLetter = join(dir, "aborted.ndjson");
    const summary = await abortWhenOthersAreThrough(server, file(lines), { deadLetter }, 38);
    // The dead-letter file holds only messages that finally failed; the interrupted two are covered by the resume line.
    expect(summary).toMatchObject({ delivered: 38, failed: 0, interrupted: 2, deadLettered: 0, resumeLine: 1, deliveredAfterResume: 38 });
    expect(readFileSync(deadLetter, "utf8")).toBe("");
  });
  describe("a file that changes between the validation and the sending pass", () => {
    it("lines appended meanwhile are not sent: only what was checked goes out", async () => {
      const server = await startServer();
      servers.push(server);
      const path = file([JSON.stringify(track("u", 1)), JSON.stringify(track("u", 2))]);
      const summary = await replay(options(path, server, { onSending: () => appendFileSync(path, `${JSON.stringify(track("u", 3))}\n`) }));
      expect(summary.error).toBeUndefined();
      expect(summary.delivered).toBe(2);
      expect(server.requests.map((r) => seqOf(r.body))).toEqual([1, 2]);
    });

    it("a checked line that went bad stops the run at it, with a resume line, instead of being skipped", async () => {
      const server = await startServer();
      servers.push(server);
      const lines = [1, 2, 3].map((seq) => JSON.stringify(track("u", seq)));
      const path = file(lines);
      const summary = await replay(
        options(path, server, { concurrency: 1, onSending: () => writeFileSync(path, `${lines[0]}\n{"type":"track"\n${lines[2]}\n`) }),
      );
      expect(summary.error?.value).toBeInstanceOf(InputError);
      expect((summary.error?.value as InputError | undefined)?.message).toMatch(/^line 2 changed during the run/);
      expect((summary.error?.value as InputError | undefined)?.source).toEqual({ file: path, line: 2 });
      expect(summary.resumeLine).toBeLessThanOrEqual(2);
      expect(server.requests.map((r) => seqOf(r.body))).not.toContain(3);
    });

    // The validation pass decides which lines go (its plan, src/replay/line-bits.ts); the sending pass does not select again.
    it("a line the selectors left out stays out, even when rewritten meanwhile into one they would pick", async () => {
      const server = await startServer();
      servers.push(server);
      const identify = { version: 1, type: "identify", userId: "u", traits: { seq: 2 }, timestamp: "2024-01-01T00:00:00.000Z" };
      const lines = [JSON.stringify(track("u", 1)), JSON.stringify(identify), JSON.stringify(track("u", 3))];
      const path = file(lines);
      const rewritten = [lines[0], JSON.stringify(track("u", 2)), lines[2]];
      const summary = await replay(
        options(path, server, { selection: createSelection({ types: ["track"] }), onSending: () => writeFileSync(path, `${rewritten.join("\n")}\n`) }),
      );
      expect(summary).toMatchObject({ messages: 2, filtered: 1, sent: 2, delivered: 2 });
      expect(summary.error).toBeUndefined();
      expect(server.requests.map((r) => seqOf(r.body))).toEqual([1, 3]);
    });

    it("a line the selectors picked is sent as it reads now, even when rewritten meanwhile into one they would leave out", async () => {
      const server = await startServer();
      servers.push(server);
      const lines = [1, 2, 3].map((seq) => JSON.stringify(track("u", seq)));
      const path = file(lines);
      const identify = JSON.stringify({ version: 1, type: "identify", userId: "u", traits: { seq: 2 }, timestamp: "2024-01-01T00:00:00.000Z" });
      const summary = await replay(
        options(path, server, {
          concurrency: 1,
          selection: createSelection({ types: ["track"] }),
          onSending: () => writeFileSync(path, `${lines[0]}\n${identify}\n${lines[2]}\n`),
        }),
      );
      expect(summary).toMatchObject({ messages: 3, filtered: 0, sent: 3, delivered: 3 });
      expect(server.requests.map((r) => r.body.toString())).toEqual([lines[0], identify, lines[2]]);
    });
  });
});
