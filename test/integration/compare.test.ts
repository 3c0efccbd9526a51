import { execFileSync } from "node:child_process";
import { createWriteStream, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/terminal/io.js";
import { main } from "../../src/cli/shell/program.js";
import { formatResultLine, keepBody, messageFacts, resultLine } from "../../src/regress/results.js";
import { MAX_RUNS } from "../../src/regress/results-read.js";
import type { ReceivedRequest } from "../helpers/http-server.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// `replay --compare` run in process (main with its I/O injected) against real receivers.
const { server } = closeServersAfterEach();
const { dir, ndjson } = tempDir("compare-int-");

const LINES = 24;
/** Line n: a track by its own user (so nothing waits on per-user order), every 4th an identify. */
const typeOf = (n: number): string => (n % 4 === 0 ? "identify" : "track");
const message = (n: number): string =>
  JSON.stringify({
    version: 1,
    type: typeOf(n),
    userId: `u${n}`,
    messageId: `m-${n}`,
    timestamp: "2026-01-01T00:00:00.000Z",
    ...(n % 4 === 0 ? { traits: {} } : { event: "E", properties: {} }),
  });
const input = ndjson(Array.from({ length: LINES }, (_, i) => message(i + 1)));
const lineOf = (request: ReceivedRequest): number => Number((JSON.parse(request.body.toString()) as { messageId: string }).messageId.slice(2));

/** An old results line for input line n whose answer's total is `total`. */
function old(n: number, total = n * 10): string {
  const facts = messageFacts({ type: typeOf(n), event: "E", userId: `u${n}`, messageId: `m-${n}` }, `u${n}`);
  const url = {
    url: "http://127.0.0.1:1/",
    status: 200,
    attempts: 1,
    ms: 1,
    error: null,
    response: { contentType: "application/json", body: keepBody(JSON.stringify({ total })) },
  };
  return formatResultLine(resultLine({ line: n, facts, delivered: true, urls: [url] }));
}

function io(signal = new AbortController().signal): CliIo & { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: { NO_COLOR: "1" },
    cwd: dir,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    signal,
    out: () => out,
    err: () => err,
  };
}

describe("replay --compare, reading the old file beside the run", () => {
  it("compares answers that finish out of order at --concurrency 8 with their own old lines: runs, gaps, repeats, lines not sent", async () => {
    // The new build: total n*10, but n*10+1 on every 7th line. Later lines answer sooner, so answers finish out of order.
    const finished: number[] = [];
    const target = await server((request, res) => {
      const n = lineOf(request);
      setTimeout(
        () => {
          finished.push(n);
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ total: n * 10 + (n % 7 === 0 ? 1 : 0) }));
        },
        (LINES - n) * 5,
      );
    });
    const evens = [2, 4, 8, 10, 12, 14, 16, 18, 20, 22, 24, 30].map((n) => old(n, n === 10 ? 999 : n * 10));
    const odds = [1, 3, 7, 9, 11, 13, 15, 17, 19, 21, 23].map((n) => old(n));
    // Three runs, as shards concatenated and a resumed run: line 10's later answer wins. Lines 5 and 6 have none.
    const path = join(dir, "runs.ndjson");
    writeFileSync(path, [...evens, ...odds, old(10)].join(""));

    const cli = io();
    const code = await main(
      ["replay", input, "--url", target.url, "--concurrency", "8", "--type", "track", "--retry-window", "0s", "--compare", "runs.ndjson"],
      cli,
    );
    expect(finished).not.toEqual([...finished].sort((a, b) => a - b));
    const tracks = Array.from({ length: LINES }, (_, i) => i + 1).filter((n) => typeOf(n) === "track");
    expect(target.requests.map(lineOf).sort((a, b) => a - b)).toEqual(tracks);
    expect([...cli.out().matchAll(/^≠ line (\d+) \(track E, u\d+\): body \$\.total: (\d+) → (\d+)$/gm)].map((m) => [m[1], m[2], m[3]].map(Number))).toEqual([
      [7, 70, 71],
      [14, 140, 141],
      [21, 210, 211],
    ]);
    // The identifies were not sent (--type track): their old lines are out of scope, not missing; line 30 is.
    expect(cli.out()).toContain("missing from this run: line 30\n");
    expect(cli.out()).toContain("compared with runs.ndjson: 13 same, 3 changed, 2 new, 1 missing\n");
    expect(code).toBe(1);
  });

  it("interrupted part way: the answers released so far are compared, nothing counts as missing, exit 130", async () => {
    // Line 10 is answered 503 and waits to retry when the stop comes: it is dropped, and the lines after it released.
    const target = await server((request, res) => {
      res.statusCode = lineOf(request) === 10 ? 503 : 200;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ total: lineOf(request) * 10 }));
    });
    writeFileSync(join(dir, "whole.ndjson"), Array.from({ length: LINES }, (_, i) => old(i + 1)).join(""));
    const controller = new AbortController();
    const cli = io(controller.signal);
    const run = main(["replay", input, "--url", target.url, "--concurrency", "4", "--compare", "whole.ndjson"], cli);
    await expect.poll(() => target.requests.length, { interval: 10 }).toBeGreaterThanOrEqual(LINES);
    controller.abort("SIGINT");
    expect(await run).toBe(130);
    // Line 10 has an old answer and no new one: after an interruption that is not "missing".
    expect(cli.out()).toContain("compared with whole.ndjson: 23 same, 0 changed, 0 new, 0 missing\n");
    expect(cli.err()).toContain("interrupted: resume with --from-line 10");
  });

  it("refuses a bad old file before anything is sent, naming the file and line", async () => {
    const target = await server();
    writeFileSync(join(dir, "bad.ndjson"), `${old(1)}${old(2)}{"line":3,"urls":[{"status":"ok"}]}\n${old(4)}`);
    const bad = io();
    expect(await main(["replay", input, "--url", target.url, "--compare", "bad.ndjson"], bad)).toBe(2);
    expect(bad.err()).toMatch(/bad\.ndjson:3: not a results line: urls\[0\]: key "status"/);

    writeFileSync(join(dir, "shuffled.ndjson"), Array.from({ length: MAX_RUNS + 2 }, (_, i) => old(MAX_RUNS + 2 - i)).join(""));
    const shuffled = io();
    expect(await main(["replay", input, "--url", target.url, "--compare", "shuffled.ndjson"], shuffled)).toBe(2);
    expect(shuffled.err()).toMatch(new RegExp(`shuffled\\.ndjson:${MAX_RUNS + 1}: answers out of input order: line 2 after line 3, .*sort the file by "line"`));

    const same = io();
    expect(await main(["replay", input, "--url", target.url, "--compare", "bad.ndjson", "--results", "bad.ndjson"], same)).toBe(2);
    expect(target.requests).toHaveLength(0);
  });

  it("refuses the --compare file as the --results file, naming both flags, before anything is sent; a dry run writes no results and may", async () => {
    const target = await server();
    const path = join(dir, "both.ndjson");
    const before = Array.from({ length: LINES }, (_, i) => old(i + 1)).join("");
    writeFileSync(path, before);
    const cli = io();
    expect(await main(["replay", input, "--url", target.url, "--compare", "both.ndjson", "--results", "./both.ndjson"], cli)).toBe(2);
    expect(cli.err()).toBe(`error: ${path}: --results: the results file cannot be the --compare file\n`);
    expect(target.requests).toHaveLength(0);
    expect(readFileSync(path, "utf8")).toBe(before);
    const dry = io();
    expect(
      await main(["replay", input, "--url", target.url, "--compare", "both.ndjson", "--results", "both.ndjson", "--dry-run", "--quiet"], dry),
      dry.err(),
    ).toBe(0);
  });

  it("reads an old file given as a pipe (copied aside first, since it is read twice)", async () => {
    const target = await server((request, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ total: lineOf(request) * 10 }));
    });
    const fifo = join(dir, "old.fifo");
    execFileSync("mkfifo", [fifo]);
    createWriteStream(fifo).end(Array.from({ length: LINES }, (_, i) => old(i + 1)).join(""));
    const cli = io();
    const code = await main(["replay", input, "--url", target.url, "--line", "1-8", "--compare", "old.fifo"], cli);
    expect(code, cli.out() + cli.err()).toBe(0);
    expect(cli.out()).toContain("compared with old.fifo: 8 same, 0 changed, 0 new, 0 missing\n");
  });
});
