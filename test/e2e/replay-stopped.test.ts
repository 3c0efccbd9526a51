import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/run-cli.js";
import { startServer, type Responder } from "../helpers/http-server.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const { servers } = closeServersAfterEach();
const { dir, ndjson: file } = tempDir("replay-stopped-");

const LINES = 300;
const track = (seq: number): string =>
  JSON.stringify({
    version: 1,
    type: "track",
    userId: `u${seq % 7}`,
    event: "Step",
    messageId: `m-${seq}`,
    properties: { seq },
    timestamp: "2024-01-01T00:00:00.000Z",
  });
const input = (): string => file(Array.from({ length: LINES }, (_, i) => track(i + 1)));
const seqOf = (body: Buffer): number => (JSON.parse(body.toString()) as { properties: { seq: number } }).properties.seq;

/** A receiver that answers 400 to the lines in `failing` and 200 to the others, remembering which lines got a 200. */
async function receiver(failing: ReadonlySet<number>): Promise<{ url: string; delivered: Set<number> }> {
  const delivered = new Set<number>();
  const respond: Responder = (request, res) => {
    const seq = seqOf(request.body);
    res.statusCode = failing.has(seq) ? 400 : 200;
    if (res.statusCode === 200) delivered.add(seq);
    res.end();
  };
  const server = await startServer(respond);
  servers.push(server);
  return { url: `${server.url}/hook`, delivered };
}

/** The printed low-water line, and how many later lines it says were delivered already. */
function resumeOf(stderr: string): { line: number; later: number } {
  const match = /stopped by the error below: resume with --from-line (\d+)(?: \((\d+) later lines? (?:was|were) delivered already)?/.exec(stderr);
  if (!match) throw new Error(`no resume hint in: ${stderr}`);
  return { line: Number(match[1]), later: Number(match[2] ?? 0) };
}

/** delivered ∪ {lines ≥ N} must cover every line (nothing was dead-lettered: the file could not be written). */
function expectCovered(delivered: ReadonlySet<number>, resume: { line: number; later: number }): void {
  const missing = Array.from({ length: resume.line - 1 }, (_, i) => i + 1).filter((line) => !delivered.has(line));
  expect(missing).toEqual([]);
  expect(resume.later).toBe([...delivered].filter((line) => line > resume.line).length);
}

describe.skipIf(!existsSync("/dev/full"))("replay stopped part way by a file it cannot write", () => {
  it("a dead-letter file that fails to write (disk full) still ends with the summary, the low-water resume line and exit 1", async () => {
    const target = await receiver(new Set([150]));
    const result = await runInProcess(["replay", input(), "--url", target.url, "--concurrency", "8", "--dead-letter", "/dev/full"]);
    expect(result.stderr).not.toContain("internal error");
    expect(result.stderr).not.toMatch(/^\s+at /m);
    expect(result.stderr).toContain("error: /dev/full: --dead-letter: cannot write: ENOSPC");
    expect(result.stdout).toMatch(/^\d+ messages: \d+ delivered, [1-9]\d* failed, \d+ retried, \d+ not delivered \(interrupted\)$/m);
    expect(result.code).toBe(1);
    const resume = resumeOf(result.stderr);
    // Line 150 was not written anywhere: it is at or after the resume line.
    expect(resume.line).toBeLessThanOrEqual(150);
    expectCovered(target.delivered, resume);
  });

  it("a --results file that fails to write does the same; lines whose result was lost are sent again", async () => {
    const target = await receiver(new Set());
    const result = await runInProcess(["replay", input(), "--url", target.url, "--concurrency", "8", "--results", "/dev/full"]);
    expect(result.stderr).not.toContain("internal error");
    expect(result.stderr).toContain("error: /dev/full: --results: cannot write: ENOSPC");
    expect(result.stdout).toMatch(/^\d+ messages: \d+ delivered, 0 failed, \d+ retried, \d+ not delivered \(interrupted\)$/m);
    expect(result.code).toBe(1);
    const resume = resumeOf(result.stderr);
    expect(resume.line).toBe(1);
    expectCovered(target.delivered, resume);
  });
});

describe("replay --raw: what the send pass sends, the validation pass has checked", () => {
  it("a recording envelope nested too deep is sent as read, in --dry-run and for real, instead of a stack overflow", async () => {
    const deep = `{"receivedAt":"2024-01-01T00:00:00.000Z","body":${"[".repeat(100_000)}1${"]".repeat(100_000)}}`;
    const path = file([track(1), deep]);
    const dry = await runInProcess(["replay", path, "--raw", "--dry-run"]);
    expect(dry.stderr).not.toContain("internal error");
    expect(dry.stdout).toContain("dry run: 2 messages would be sent (2 lines)");
    expect(dry.code).toBe(0);
    const target = await startServer();
    servers.push(target);
    const sent = await runInProcess(["replay", path, "--raw", "--url", target.url]);
    expect(sent.stderr).not.toContain("internal error");
    expect(sent.code).toBe(0);
    expect(target.requests.map((r) => r.body.toString()).sort()).toEqual([deep, track(1)].sort());
  });

  it("a line that is not JSON, failing under --raw, is dead-lettered with its bytes and sent again by a --raw replay of the dead letters", async () => {
    const target = await startServer((request, res) => {
      res.statusCode = request.body.toString().startsWith("{") ? 200 : 400;
      res.end();
    });
    servers.push(target);
    const deadLetter = join(dir, "raw-dead.ndjson");
    const path = file([track(1), "not json at all", track(3)]);
    const result = await runInProcess(["replay", path, "--raw", "--url", target.url, "--dead-letter", deadLetter]);
    expect(result.stderr).not.toContain("internal error");
    expect(result.stdout).toContain("3 messages: 2 delivered, 1 failed");
    expect(result.code).toBe(1);
    const again = await runInProcess(["replay", deadLetter, "--raw", "--url", target.url]);
    expect(again.code).toBe(1);
    expect(target.requests.map((r) => r.body.toString()).filter((body) => !body.startsWith("{"))).toEqual(["not json at all", "not json at all"]);
  });
});
