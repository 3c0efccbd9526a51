import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collect, spawnCli, waitForLine, type CliResult } from "../helpers/cli.js";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";
import { rssMb, slowUpload, trickle } from "../helpers/slow-upload.js";
import { killChildrenAfterEach } from "../helpers/setup.js";

const track = JSON.stringify({ version: 1, type: "track", userId: "u", event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const AUTH = { authorization: `Basic ${Buffer.from("wk:").toString("base64")}` };

let dir: string;
const children = killChildrenAfterEach();
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "webhook-cli-e2e-limits-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** In process: what the receivers answer and how they treat connections. */
async function startHere(args: string[]): Promise<{ url: string }> {
  const run = startInProcess(args);
  const [, url] = await run.waitFor(/Listening on (http\S+)/, 15_000);
  return { url: url as string };
}

/** The built CLI as a child process: its RSS is measured. */
async function start(args: string[]): Promise<{ url: string; child: ChildProcess; done: Promise<CliResult> }> {
  const child = spawnCli(args);
  children.push(child);
  const done = collect(child, 90_000);
  const [, url] = await waitForLine(child, /Listening on (http\S+)/, 15_000);
  return { url: url as string, child, done };
}

const listenArgs = (extra: string[] = []) => ["listen", "--port", "0", ...extra];
const serveArgs = (extra: string[] = []) => ["serve", "--port", "0", "--write-key", "wk", "--state", mkdtempSync(join(dir, "state-")), ...extra];

function connected(port: number, host: string): Promise<ReturnType<typeof connect>> {
  return new Promise((ok) => {
    const socket = connect(port, host, () => ok(socket));
  });
}

/** The server counts a connection gone when it sees the close: until then a new one may still be turned away. */
async function expectAnsweredAgain(path: string, body: string): Promise<void> {
  await expect.poll(() => post(path, body, AUTH).catch(() => 0)).toBe(200);
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  await response.body.dump();
  return response.statusCode;
}

describe("an early answer reaches a sender still uploading (lingering close)", () => {
  it.each([
    ["listen", () => startHere(listenArgs()), "/hook", "413"],
    ["serve", () => startHere(serveArgs()), "/v1/batch", "400"],
  ] as const)("%s: a 5 MB body trickled in pieces gets its answer, not a reset", async (_name, startIt, path, status) => {
    const { url } = await startIt();
    const upload = await slowUpload(url, path, 5 * 1024 * 1024, AUTH);
    await trickle(upload.socket, 5 * 1024 * 1024, 40, 10);
    upload.socket.end();
    const { reset } = await upload.closed;
    expect(upload.received()).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(reset).toBe(false);
  });
});

describe("--max-connections", () => {
  it("listen: connections past the cap are closed on arrival; the first ones still get answers", async () => {
    const { url } = await startHere(listenArgs(["--max-connections", "3"]));
    const { hostname, port } = new URL(url);
    const open = await Promise.all([1, 2, 3].map(() => connected(Number(port), hostname)));
    const extra = connect(Number(port), hostname);
    const closedAt = await new Promise<string>((done) => {
      extra.on("error", () => done("error"));
      extra.on("close", () => done("closed"));
    });
    expect(closedAt).toMatch(/closed|error/);
    await Promise.all(open.map((socket) => new Promise((closed) => socket.once("close", closed).destroy())));
    await expectAnsweredAgain(`${url}/hook`, track);
  });

  it("serve: a connection past the cap is not reset: its request gets 503 with Retry-After, then it is closed", async () => {
    const { url } = await startHere(serveArgs(["--max-connections", "3"]));
    const { hostname, port } = new URL(url);
    const open = await Promise.all([1, 2, 3].map(() => connected(Number(port), hostname)));
    const extra = await connected(Number(port), hostname);
    let received = "";
    extra.on("data", (chunk: Buffer) => (received += chunk.toString()));
    const closed = new Promise<boolean>((done) => extra.once("close", done));
    const body = '{"userId":"u","event":"E"}';
    extra.write(`POST /v1/track HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${AUTH.authorization}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    expect(await closed).toBe(false);
    expect(received).toMatch(/^HTTP\/1\.1 503 [\s\S]*\r\nretry-after: 2\r\n[\s\S]*"code":"unavailable"/i);
    await Promise.all(open.map((socket) => new Promise((done) => socket.once("close", done).destroy())));
    await expectAnsweredAgain(`${url}/v1/track`, body);
  });

  it("refuses a value that is not a decimal whole number", async () => {
    const result = await runInProcess(["listen", "--port", "0", "--max-connections", "0x10"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--max-connections");
  });
});

describe("soak: hundreds of stalled uploads", () => {
  // Each stalled upload stops one byte short of the limit and never finishes. Before the body budget, each
  // held about its body in memory (250 × 1 MiB for listen); now bodies past the 32 MiB budget get 503.
  // The bound is on growth over the receiver's own baseline. It swings with V8's collection timing, not
  // with held bodies: measured listen +102 to +125 MB on Node 20 and +107 to +203 on Node 24, serve +71 to
  // +75 and +103. Before the budget every stalled body was held: 250 × 1 MiB for listen (+255 MB on Node
  // 20), 250 × 500 KB for serve (+124). The listen bound still fails that; serve's no longer separates the
  // two. The budget itself is asserted on each receiver (503 past it): test/integration/receiver-failures.test.ts
  // for listen, test/integration/serve.test.ts for serve; both read bodies through src/http/body-reader.ts.
  it.each([
    ["listen", () => start(listenArgs()), "/hook", 1024 * 1024, track, 240],
    ["serve", () => start(serveArgs()), "/v1/track", 500 * 1024, '{"userId":"u","event":"E"}', 150],
  ] as const)(
    "%s: a normal sender keeps getting 200 and RSS growth stays bounded",
    { tags: ["smoke"], timeout: 60_000 },
    async (_name, startIt, path, limit, body, boundMb) => {
      const { url, child } = await startIt();
      expect(await post(`${url}${path}`, body, AUTH)).toBe(200);
      const baseline = await rssMb(child.pid as number);
      const uploads = await Promise.all(Array.from({ length: 250 }, () => slowUpload(url, path, limit, AUTH)));
      let stalled = true;
      const pushing = Promise.all(uploads.map((upload) => trickle(upload.socket, limit - 1, 4, 50)));
      const statuses: number[] = [];
      const normal = (async () => {
        while (stalled) {
          statuses.push(await post(`${url}${path}`, body, AUTH));
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await pushing;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const rss = await rssMb(child.pid as number);
      stalled = false;
      await normal;
      for (const upload of uploads) upload.socket.destroy();
      expect(statuses.length).toBeGreaterThan(5);
      expect(new Set(statuses)).toEqual(new Set([200]));
      console.log(_name, "RSS MB", Math.round(rss), "baseline", Math.round(baseline), "growth", Math.round(rss - baseline));
      expect(rss - baseline).toBeLessThan(boundMb);
    },
  );
});
