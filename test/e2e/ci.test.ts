import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { statuses } from "../helpers/http-server.js";
import { jsonEvents, runInProcess, startInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// Exit codes and JUnit reports that cannot mislead a CI job.
const { server } = closeServersAfterEach();
const { dir, file, ndjson } = tempDir("ci-e2e-");

const track = (userId: string, seq: number): string =>
  JSON.stringify({ version: 1, type: "track", userId, event: "Step", properties: { seq }, timestamp: "2024-01-01T00:00:00.000Z" });
const ten = Array.from({ length: 10 }, (_, i) => track(`u${i}`, i));

describe("nothing to send exits 2 with one reason, unless --allow-empty", () => {
  const cases: [string, () => string[], RegExp][] = [
    ["replay of an empty file", () => ["replay", file("empty.ndjson", "")], /nothing to send: the input is empty/],
    [
      "replay --from-line past the end",
      () => ["replay", ndjson(ten), "--from-line", "999"],
      /--from-line: nothing to send: --from-line 999 is past the end of .* \(10 lines\)/,
    ],
    [
      "replay whose --type matches no line",
      () => ["replay", ndjson(ten), "--type", "identify"],
      /nothing to send: no line matched the filters \(10 filtered out\)/,
    ],
    [
      "replay --skip-invalid with every line invalid",
      () => ["replay", ndjson(["{", "[1]"]), "--skip-invalid"],
      /nothing to send: every line was skipped as invalid \(2\)/,
    ],
    ["send of an empty file", () => ["send", file("empty.json", "\n")], /nothing to send: the input is empty/],
    ["send of an empty array", () => ["send", file("empty-array.json", "[ ]")], /nothing to send: the input is empty/],
  ];
  for (const [name, args, reason] of cases) {
    it(`${name}: 2, and 0 with --allow-empty; nothing is sent either way`, async () => {
      const target = await server();
      const argv = [...args(), "--url", target.url];
      const refused = await runInProcess(argv);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(reason);
      expect(refused.stderr.trim().split("\n")).toHaveLength(name.includes("skip-invalid") ? 3 : 1);
      const allowed = await runInProcess([...argv, "--allow-empty"]);
      expect(allowed.code).toBe(0);
      expect(target.requests).toHaveLength(0);
    });
  }
});

describe("JUnit has a failing case for every reason the command exits non-zero", () => {
  const failuresOf = (xml: string): number => Number(/<testsuite [^>]*failures="(\d+)"/.exec(xml)?.[1]);

  it("listen --count 1 --exit-after 1s with no request: exit 1 and one failing case (not tests=0)", async () => {
    const junit = join(dir, "listen.xml");
    const result = await runInProcess(["listen", "--port", "0", "--count", "1", "--exit-after", "1s", "--junit", junit]);
    expect(result.code).toBe(1);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain('tests="1" failures="1"');
    expect(xml).toContain("--exit-after 1.0s came before --count 1 requests (0 received)");
  });

  it("listen: an invalid request is a failing case", async () => {
    const junit = join(dir, "listen-invalid.xml");
    const listen = startInProcess(["listen", "--port", "0", "--count", "1", "--junit", junit, "--secret", "s"]);
    const [, url] = await listen.waitFor(/Listening on (\S+)/);
    const posted = await runInProcess(["send", "-", "--url", url as string, "--secret", "other"], { input: track("u", 1) });
    // listen answers a bad signature with 401: the sender fails too.
    expect(posted.code).toBe(1);
    const result = await listen.done;
    expect(result.code).toBe(1);
    expect(failuresOf(readFileSync(junit, "utf8"))).toBe(1);
  });

  it("send --junit: one case per message, the one not delivered fails; exit 1", async () => {
    const target = await server((req, res) => {
      res.statusCode = req.body.toString().includes('"bad"') ? 400 : 200;
      res.end();
    });
    const junit = join(dir, "send.xml");
    const result = await runInProcess(["send", ndjson([track("ok", 1), track("bad", 2), track("ok", 3)]), "--url", target.url, "--junit", junit]);
    expect(result.code).toBe(1);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toContain('tests="3" failures="1"');
    expect(xml).toMatch(/<testcase name="[^"]*:2: track"[^>]*>\s*<failure message="[^"]*400/);
  });

  it("replay --junit: the message not delivered fails; exit 1", async () => {
    const target = await server((req, res) => {
      res.statusCode = req.body.toString().includes('"bad"') ? 400 : 200;
      res.end();
    });
    const junit = join(dir, "replay.xml");
    const result = await runInProcess(["replay", ndjson([track("ok", 1), track("bad", 2)]), "--url", target.url, "--junit", junit]);
    expect(result.code).toBe(1);
    expect(failuresOf(readFileSync(junit, "utf8"))).toBe(1);
  });
});

describe("--retry-window 0", () => {
  it("means no retries: one attempt at a 503, exit 1", async () => {
    const target = await server((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const result = await runInProcess(["send", "--type", "track", "--url", target.url, "--retry-window", "0"]);
    expect(result.code).toBe(1);
    expect(target.requests).toHaveLength(1);
  });
});

describe("progress you can see without a terminal", () => {
  it("replay against a receiver that never answers 2xx: a status line and the retry-window notice within 15 s; Ctrl-C exits 130", async () => {
    const target = await server((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const replay = startInProcess(["replay", ndjson(ten), "--url", target.url, "--concurrency", "4"]);
    const status = /replay: (\d+) sent, 0 delivered, (\d+) retrying, 0 failed, [\d.]+\/s, oldest pending: next attempt in /;
    await replay.waitForStderr(status, 15_000);
    const stderr = replay.stderr();
    expect(stderr).toContain("note: failed messages are retried for up to 4h (the default); --retry-window 30s (or 0, no retries) gives up sooner");
    // Said once, not per message.
    expect(stderr.match(/note: failed messages/g)).toHaveLength(1);
    replay.stop("SIGINT");
    const result = await replay.done;
    expect(result.code).toBe(130);
    // A last status line at the end, then the resume hint at line 1 (nothing was delivered).
    expect(result.stderr).toContain("interrupted: resume with --from-line 1\n");
  }, 30_000);

  it("no notice when --retry-window is given; replay --verbose logs every attempt as send does", async () => {
    const target = await server(statuses(503, 200));
    const result = await runInProcess(["replay", ndjson([track("u", 1)]), "--url", target.url, "--retry-window", "10s", "--verbose"]);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("note: failed messages");
    expect(result.stderr).toContain(`> POST ${target.url} (attempt 1)`);
    expect(result.stderr).toContain("< 503");
    expect(result.stderr).toContain(`> POST ${target.url} (attempt 2)`);
    expect(result.stderr).toContain("< 200");
    // The last status line, printed at the end without a terminal.
    expect(result.stderr).toMatch(/replay: 1 sent, 1 delivered, 0 retrying, 0 failed/);
  });

  it("send with many messages prints a last status line without a terminal; one message does not", async () => {
    const target = await server();
    const many = await runInProcess(["send", ndjson([track("u", 1), track("u", 2)]), "--url", target.url]);
    expect(many.code).toBe(0);
    expect(many.stderr).toMatch(/send: 2 sent, 2 delivered, 0 retrying, 0 failed/);
    const one = await runInProcess(["send", "--type", "track", "--url", target.url]);
    expect(one.stderr).not.toMatch(/send: \d+ sent/);
  });
});

describe("readiness for CI scripts", () => {
  const waitForFile = async (path: string): Promise<string> => {
    await expect.poll(() => existsSync(path), { message: `${path} is written` }).toBe(true);
    return readFileSync(path, "utf8");
  };

  it("listen --ready-file writes the URL; GET and HEAD /health answer 200 with the counts; another GET is shown and counted invalid", async () => {
    const ready = join(dir, "listen.url");
    const listen = startInProcess(["listen", "--port", "0", "--ready-file", ready, "--count", "1", "--json"]);
    // Line 1 the webhook URL (what `head -1` reads), line 2 the control API's.
    const [url, control, rest] = (await waitForFile(ready)).split("\n");
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(control).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(control).not.toBe(url);
    expect(rest).toBe("");
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, received: 0, valid: 0, invalid: 0 });
    const head = await fetch(`${url}/health`, { method: "HEAD" });
    expect(head.status).toBe(200);
    // Not a health check: answered 405, and counted (it is the --count 1 request, invalid: exit 1).
    const other = await fetch(`${url}/hook`);
    expect(other.status).toBe(405);
    const result = await listen.done;
    expect(result.code).toBe(1);
    const events = jsonEvents(result.stdout);
    expect(events.find((e) => e["event"] === "request")).toMatchObject({ method: "GET", path: "/hook", status: 405 });
    expect(events.at(-1)).toMatchObject({ event: "summary", received: 1, invalid: 1 });
  });

  it("serve --ready-file writes the URL once listening", async () => {
    const ready = join(dir, "serve.url");
    const serve = startInProcess(["serve", "--port", "0", "--memory", "--ready-file", ready]);
    const url = (await waitForFile(ready)).trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    serve.stop("SIGTERM");
    expect((await serve.done).code).toBe(0);
  });
});

describe("the printed resume hint, followed, delivers every line (CLI, Ctrl-C)", () => {
  const seqOf = (body: Buffer): number => (JSON.parse(body.toString()) as { properties: { seq: number } }).properties.seq;
  // Line n carries seq n; u(n % 6) keeps per-user order in play.
  const lines = Array.from({ length: 80 }, (_, i) => track(`u${i % 6}`, i + 1));

  for (const [concurrency, withDeadLetter, after] of [
    [1, false, 6],
    [1, true, 8],
    [32, false, 30],
    [32, true, 40],
  ] as const) {
    it(`concurrency ${concurrency}, ${withDeadLetter ? "with" : "without"} --dead-letter, Ctrl-C after ${after} requests`, async () => {
      const delivered = new Set<number>();
      // Every 10th line from 3 fails for good, every 10th from 7 is retried until the interruption, others are delayed a little.
      const flaky = await server((req, res) => {
        const seq = seqOf(req.body);
        const status = seq % 10 === 3 ? 400 : seq % 10 === 7 ? 503 : 200;
        setTimeout(
          () => {
            if (status === 200) delivered.add(seq);
            res.statusCode = status;
            res.end();
          },
          (seq * 7) % 20,
        );
      });
      const path = ndjson(lines);
      const deadLetter = join(dir, `hint-${concurrency}-${after}.ndjson`);
      const replay = startInProcess([
        "replay",
        path,
        "--url",
        flaky.url,
        "--concurrency",
        String(concurrency),
        ...(withDeadLetter ? ["--dead-letter", deadLetter] : []),
      ]);
      await expect.poll(() => flaky.requests.length, { interval: 5 }).toBeGreaterThanOrEqual(after);
      replay.stop("SIGINT");
      const result = await replay.done;
      expect(result.code).toBe(130);
      const mark = Number(/interrupted: resume with --from-line (\d+)/.exec(result.stderr)?.[1]);
      expect(mark).toBeGreaterThan(0);
      const dead = withDeadLetter
        ? readFileSync(deadLetter, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as { body: { properties: { seq: number } } }).body.properties.seq)
        : [];
      // Only final failures (the 400s) are dead-lettered.
      for (const seq of dead) expect(seq % 10).toBe(3);
      for (let line = 1; line <= lines.length; line++)
        expect(delivered.has(line) || dead.includes(line) || line >= mark, `line ${line} lost (resume at ${mark})`).toBe(true);

      const healthy = await server();
      const resumed = await runInProcess(["replay", path, "--url", healthy.url, "--from-line", String(mark), "--concurrency", String(concurrency)]);
      expect(resumed.code).toBe(0);
      if (dead.length > 0) expect((await runInProcess(["replay", deadLetter, "--url", healthy.url])).code).toBe(0);
      for (const r of healthy.requests) delivered.add(seqOf(r.body));
      expect([...delivered].sort((a, b) => a - b)).toEqual(lines.map((_, i) => i + 1));
    });
  }
});
