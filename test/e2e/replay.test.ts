import { readFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { sign } from "../../src/signing/x-signature.js";
import { startServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const { servers } = closeServersAfterEach();

const { dir, ndjson: file } = tempDir("replay-e2e-");

const track = (userId: string, seq: number): string =>
  JSON.stringify({ version: 1, type: "track", userId, event: "Step", properties: { seq }, timestamp: "2024-01-01T00:00:00.000Z" });
const seqOf = (body: Buffer): number => (JSON.parse(body.toString()) as { properties: { seq: number } }).properties.seq;

describe("webhook-cli replay", () => {
  it("replays a recording made by listen byte for byte, re-signed with the replay's secret", async () => {
    const recording = join(dir, "recording.ndjson");
    const listener = startInProcess(["listen", "--port", "0", "--secret", "original", "--record", recording]);
    const [, url] = await listener.waitFor(/Listening on (\S+)/);
    // Odd spacing, escapes and number forms: the recording must keep the exact bytes.
    const bodies = [
      '{"version":1,"type":"track","userId":"u1","event":"A","properties":{"n":1.50,"s":"caf\\u00e9"},"timestamp":"2024-01-01T00:00:00.000Z"}',
      '{ "version": 1, "type": "identify", "userId": "u2", "traits": { "name": "Zoë" }, "timestamp": "2024-01-01T00:00:01.000Z" }\n',
      JSON.stringify({ version: 1, type: "page", userId: "u1", properties: { path: "/" }, timestamp: "2024-01-01T00:00:02.000Z" }),
      '{"type":"delete","userId":"u3","timestamp":"2024-01-01T00:00:03.000Z","extra":1e3}',
    ];
    for (const body of bodies) {
      const response = await request(`${url as string}/hooks`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-signature": sign("original", body) },
        body,
      });
      await response.body.dump();
      expect(response.statusCode).toBe(200);
    }
    listener.stop("SIGINT");
    await listener.done;

    const target = await startServer();
    servers.push(target);
    const result = await runInProcess(["replay", recording, "--url", `${target.url}/new`, "--secret", "replayed", "--concurrency", "1"]);
    // Without a terminal, stderr holds only the last status line.
    expect(result.stderr).toMatch(/^replay: 4 sent, 4 delivered, 0 retrying, 0 failed, [\d.]+\/s\n$/);
    expect(result.code).toBe(0);
    expect(target.requests.map((r) => r.body.toString())).toEqual(bodies);
    for (const r of target.requests) expect(r.headers["x-signature"]).toBe(sign("replayed", r.body));
    expect(result.stdout).toMatch(/4 messages: 4 delivered, 0 failed, 0 retried/);
  });

  it("exits 2 naming line 3 when it is bad, and sends nothing", async () => {
    const target = await startServer();
    servers.push(target);
    const path = file([track("u", 1), track("u", 2), '{"version":1,"type":"track","userId":"u"}', track("u", 4)]);
    const result = await runInProcess(["replay", path, "--url", target.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${path}:3:`);
    expect(result.stderr).toMatch(/missing required key "event"/);
    expect(result.stderr).not.toMatch(/:(1|2|4):/);
    expect(target.requests).toHaveLength(0);
  });

  it("--skip-invalid sends the rest from stdin and lists the skipped lines", async () => {
    const target = await startServer();
    servers.push(target);
    const input = `\uFEFF${track("u", 1)}\r\n\r\nnot json\r\n${track("u", 4)}\r\n`;
    const result = await runInProcess(["replay", "-", "--url", target.url, "--skip-invalid", "--json"], { input });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/stdin:3: skipped: not JSON/);
    expect(target.requests.map((r) => seqOf(r.body))).toEqual([1, 4]);
    const summary = JSON.parse(result.stdout.trim().split("\n").at(-1) as string) as Record<string, unknown>;
    expect(summary).toMatchObject({ event: "summary", sent: 2, delivered: 2, invalid: 1 });
  });

  it("reports failures only under --json, dead-letters them, writes JUnit, exits 1", async () => {
    const target = await startServer((req, res) => {
      res.statusCode = seqOf(req.body) === 2 ? 422 : 200;
      res.end();
    });
    servers.push(target);
    const deadLetter = join(dir, "e2e-dead.ndjson");
    const junit = join(dir, "replay.xml");
    const path = file([track("a", 1), track("b", 2), track("c", 3)]);
    const result = await runInProcess(["replay", path, "--url", target.url, "--json", "--dead-letter", deadLetter, "--junit", junit]);
    expect(result.code).toBe(1);
    const events = result.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.map((e) => e["event"])).toEqual(["delivery", "summary"]);
    expect(events[0]).toMatchObject({ line: 2, type: "track", userId: "b", delivered: false, urls: [{ status: 422, attempts: 1 }] });
    expect(events[1]).toMatchObject({ sent: 3, delivered: 2, failed: 1, deadLettered: 1 });
    const dead = readFileSync(deadLetter, "utf8").trim().split("\n");
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0] as string)).toMatchObject({ failure: { reason: "HTTP 422", attempts: 1, status: 422 } });
    const xml = readFileSync(junit, "utf8");
    expect(xml.match(/<testcase /g)).toHaveLength(3);
    expect(xml.match(/<failure /g)).toHaveLength(1);
  });

  it("Ctrl-C mid-replay loses nothing: sent + dead-lettered + not yet read from the resume line = all", async () => {
    const target = await startServer((_req, res) => {
      setTimeout(() => res.end(), 25);
    });
    servers.push(target);
    const total = 600;
    const lines = Array.from({ length: total }, (_, seq) => track(`user-${seq % 9}`, seq));
    const path = file(lines);
    const deadLetter = join(dir, "interrupted.ndjson");
    const replay = startInProcess(["replay", path, "--url", target.url, "--concurrency", "4", "--dead-letter", deadLetter]);
    await expect.poll(() => target.requests.length, { interval: 10 }).toBeGreaterThanOrEqual(40);
    replay.stop("SIGINT");
    const result = await replay.done;
    expect(result.code).toBe(130);
    const resume = Number(/--from-line (\d+)/.exec(result.stderr)?.[1]);
    expect(resume).toBeGreaterThan(40);
    expect(resume).toBeLessThanOrEqual(total);

    const delivered = target.requests.map((r) => seqOf(r.body));
    const deadLines = readFileSync(deadLetter, "utf8")
      .split("\n")
      .filter((l) => l !== "");
    const dead = deadLines.map((l) => (JSON.parse(l) as { body: { properties: { seq: number } } }).body.properties.seq);
    const unread = lines.slice(resume - 1).map((_, i) => resume - 1 + i);
    const all = [...delivered, ...dead, ...unread].sort((a, b) => a - b);
    expect(all).toEqual(lines.map((_, i) => i));

    // Resuming continues exactly there.
    const resumed = await runInProcess(["replay", path, "--url", target.url, "--from-line", String(resume), "--concurrency", "16"]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`${total - resume + 1} messages: ${total - resume + 1} delivered`);
  });

  it("Ctrl-C without --dead-letter: resumes at the lowest line not delivered and says how many later lines will be sent again", async () => {
    const target = await startServer((req, res) => {
      res.statusCode = req.body.toString().includes('"stuck"') ? 503 : 200;
      res.end();
    });
    servers.push(target);
    const lines = [track("first", 0), track("stuck", 1), ...Array.from({ length: 20 }, (_, i) => track(`user-${i % 4}`, i + 2))];
    const replay = startInProcess(["replay", file(lines), "--url", target.url, "--concurrency", "4"]);
    const others = (): number => target.requests.filter((r) => !r.body.toString().includes('"stuck"')).length;
    await expect.poll(others, { interval: 10 }).toBeGreaterThanOrEqual(21);
    replay.stop("SIGINT");
    const result = await replay.done;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain("interrupted: resume with --from-line 2 (20 later lines were delivered already and will be sent again)\n");
  });

  it("--rate keeps within 10 % of the asked rate", async () => {
    const target = await startServer();
    servers.push(target);
    const path = file(Array.from({ length: 61 }, (_, seq) => track(`u${seq}`, seq)));
    const result = await runInProcess(["replay", path, "--url", target.url, "--rate", "40"]);
    expect(result.code).toBe(0);
    const times = target.requests.map((r) => r.at);
    const span = ((times.at(-1) as number) - (times[0] as number)) / 1000;
    const rate = 60 / span;
    expect(rate).toBeGreaterThan(36);
    expect(rate).toBeLessThan(44);
  });

  it("refuses a dead-letter file that is the input, and bad flags, with exit 2", async () => {
    const path = file([track("u", 1)]);
    const same = await runInProcess(["replay", path, "--url", "http://127.0.0.1:9", "--dead-letter", path]);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/--dead-letter.*input file/);
    const badRate = await runInProcess(["replay", path, "--url", "http://127.0.0.1:9", "--rate", "fast"]);
    expect(badRate.code).toBe(2);
    expect(badRate.stderr).toMatch(/--rate.*"fast"/);
    const badType = await runInProcess(["replay", path, "--url", "http://127.0.0.1:9", "--type", "click"]);
    expect(badType.code).toBe(2);
    expect(badType.stderr).toMatch(/--type.*"click"/);
  });
});
