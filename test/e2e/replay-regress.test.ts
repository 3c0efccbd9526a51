import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ReceivedRequest } from "../helpers/http-server.js";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// The replay command against real servers, in process.
const { server } = closeServersAfterEach();
const { dir, ndjson } = tempDir("replay-regress-e2e-");

interface Message {
  version: 1;
  type: string;
  messageId: string;
  userId: string;
  event?: string;
  properties?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  timestamp: string;
}

const EVENTS = ["Order Completed", "Product Viewed", "Signed Up"];
const USERS = ["u1", "u2", "u3", "u4", "u5"];

/** Line n (from 1): a track of EVENTS[n % 3] by USERS[n % 5], every 4th an identify. */
function traffic(count: number): Message[] {
  return Array.from({ length: count }, (_, i) => {
    const n = i + 1;
    const base = {
      version: 1 as const,
      messageId: `m-${n}`,
      userId: USERS[n % USERS.length] as string,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    };
    return n % 4 === 0
      ? { ...base, type: "identify", traits: { n } }
      : { ...base, type: "track", event: EVENTS[n % EVENTS.length] as string, properties: { n } };
  });
}

const messages = traffic(30);
const input = ndjson(messages.map((m) => JSON.stringify(m)));
const parse = (request: ReceivedRequest): Message => JSON.parse(request.body.toString()) as Message;
const lineOf = (m: Message): number => Number(m.messageId.slice(2));

/** The receiver's two builds: v2 adds to Order Completed totals and fails u3. requestId changes on every answer. */
function receiver(version: "v1" | "v2") {
  let counter = 0;
  return server((request, res) => {
    const m = parse(request);
    const total = lineOf(m) * 10 + (version === "v2" && m.event === "Order Completed" ? 1 : 0);
    res.statusCode = version === "v2" && m.userId === "u3" ? 500 : 200;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ok: res.statusCode === 200, total, requestId: `r${counter++}` }));
  });
}

const readLines = (path: string): Record<string, unknown>[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const replay = (url: string, ...args: string[]) => runInProcess(["replay", input, "--url", url, "--retry-window", "1ms", ...args]);

describe("replay as a regression test", () => {
  it("--results then --compare against a changed build: exactly the changed messages, exit 1, JUnit failures", async () => {
    const v1 = await receiver("v1");
    const old = join(dir, "old.ndjson");
    const first = await replay(v1.url, "--results", old);
    expect(first.code).toBe(0);
    const results = readLines(old);
    expect(results.map((r) => r["line"])).toEqual(messages.map((_, i) => i + 1));
    expect(results[0]).toMatchObject({ line: 1, messageId: "m-1", type: "track", event: "Product Viewed", userId: "u2", delivered: true });
    expect(results[0]?.["urls"]).toEqual([
      {
        url: v1.url,
        status: 200,
        attempts: 1,
        ms: expect.any(Number),
        error: null,
        contentType: "application/json",
        body: expect.stringMatching(/^\{"ok":true,"total":10,"requestId":"r\d+"\}$/),
      },
    ]);

    const v2 = await receiver("v2");
    const junit = join(dir, "compare.xml");
    const second = await replay(v2.url, "--results", join(dir, "new.ndjson"), "--compare", old, "--ignore", "$.requestId", "--junit", junit);
    expect(second.code).toBe(1);
    const expected = messages.filter((m) => m.userId === "u3" || m.event === "Order Completed").map(lineOf);
    const reported = [...second.stdout.matchAll(/^≠ line (\d+) /gm)].map((m) => Number(m[1]));
    expect(reported).toEqual(expected);
    const u3 = messages.find((m) => m.userId === "u3") as Message;
    expect(second.stdout).toContain(`≠ line ${lineOf(u3)} (${u3.type}${u3.event ? ` ${u3.event}` : ""}, u3): status 200 → 500`);
    const order = messages.find((m) => m.event === "Order Completed" && m.userId !== "u3") as Message;
    expect(second.stdout).toContain(
      `≠ line ${lineOf(order)} (track Order Completed, ${order.userId}): body $.total: ${lineOf(order) * 10} → ${lineOf(order) * 10 + 1}`,
    );
    expect(second.stdout).toContain(`compared with ${old}: ${30 - expected.length} same, ${expected.length} changed, 0 new, 0 missing`);

    const xml = readFileSync(junit, "utf8");
    const compareFailures = [...xml.matchAll(/<testcase name="line (\d+):[^"]*" classname="webhook-cli\.replay\.compare"[^/]*?>\s*<failure/g)].map((m) =>
      Number(m[1]),
    );
    expect(compareFailures).toEqual(expected);
  });

  it("the same build twice reports nothing and exits 0; without --ignore the changing field shows", async () => {
    const v1 = await receiver("v1");
    const old = join(dir, "same-old.ndjson");
    expect((await replay(v1.url, "--results", old)).code).toBe(0);
    const again = await replay(v1.url, "--compare", old, "--ignore", "$.requestId", "--json");
    expect(again.code).toBe(0);
    const events = again.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.filter((e) => e["event"] === "compare")).toEqual([]);
    expect(events.find((e) => e["event"] === "compareSummary")).toMatchObject({ same: 30, changed: 0, new: 0, missing: 0 });

    const noisy = await replay(v1.url, "--compare", old, "--json");
    expect(noisy.code).toBe(1);
    const changes = noisy.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; status?: string; changes?: string[] })
      .filter((e) => e.event === "compare");
    expect(changes).toHaveLength(30);
    expect(changes.every((e) => e.status === "changed" && e.changes?.length === 1 && e.changes[0]?.startsWith("body $.requestId: "))).toBe(true);
  });

  it("--compare takes a recording that carries the app's answers (listen --forward-to)", async () => {
    const v2 = await receiver("v2");
    const recording = ndjson(
      messages.slice(0, 3).map((m, i) =>
        JSON.stringify({
          receivedAt: m.timestamp,
          method: "POST",
          path: "/hook",
          headers: {},
          signatureValid: true,
          body: m,
          response: { status: 200, ms: 1, headers: { "content-type": "application/json" }, body: { ok: true, total: (i + 1) * 10 } },
        }),
      ),
    );
    const result = await runInProcess(["replay", recording, "--url", v2.url, "--retry-window", "1ms", "--compare", recording, "--ignore", "$.requestId"]);
    expect(result.stdout).toContain("1 same, 2 changed, 0 new, 0 missing");
    expect(result.stdout).toMatch(/≠ line 2 \(track Signed Up, u3\): status 200 → 500/);
    expect(result.stdout).toMatch(/≠ line 3 \(track Order Completed, u4\): body \$\.total: 30 → 31/);
    expect(result.code).toBe(1);
  });

  it("a real listen --forward-to recording in front of the old build is the baseline for the new one", async () => {
    const v1 = await receiver("v1");
    const recording = join(dir, "forwarded.ndjson");
    const listener = startInProcess(["listen", "--port", "0", "--secret", "s3cret", "--forward-to", `${v1.url}/hook`, "--record", recording]);
    const [, listenUrl] = await listener.waitFor(/Listening on (\S+)/);
    const firstTen = ndjson(messages.slice(0, 10).map((m) => JSON.stringify(m)));
    expect((await runInProcess(["replay", firstTen, "--url", listenUrl as string, "--secret", "s3cret", "--concurrency", "1"])).code).toBe(0);
    listener.stop("SIGINT");
    await listener.done;
    expect(readLines(recording).map((l) => (l["response"] as { status: number }).status)).toEqual(Array(10).fill(200));

    const v2 = await receiver("v2");
    const result = await runInProcess(["replay", recording, "--url", v2.url, "--retry-window", "1ms", "--compare", recording, "--ignore", "$.requestId"]);
    expect(result.code).toBe(1);
    const expected = messages
      .slice(0, 10)
      .filter((m) => m.userId === "u3" || m.event === "Order Completed")
      .map(lineOf);
    expect([...result.stdout.matchAll(/^≠ line (\d+) /gm)].map((m) => Number(m[1]))).toEqual(expected);
    expect(result.stdout).toContain(`${10 - expected.length} same, ${expected.length} changed, 0 new, 0 missing`);
  });

  it("keeps a large answer as its SHA-256 and size", async () => {
    const big = Buffer.alloc(100_000, "a");
    const target = await server((_request, res) => {
      res.end(big);
    });
    const results = join(dir, "big.ndjson");
    expect((await runInProcess(["replay", input, "--url", target.url, "--line", "1", "--results", results])).code).toBe(0);
    expect(readLines(results)[0]?.["urls"]).toEqual([
      expect.objectContaining({ status: 200, contentType: null, bodySha256: createHash("sha256").update(big).digest("hex"), bodySize: 100_000 }),
    ]);
  });

  it("--expect-status: a delivered answer outside the list fails the run and its JUnit case", async () => {
    const target = await server((request, res) => {
      res.statusCode = parse(request).type === "identify" ? 200 : 202;
      res.end();
    });
    const junit = join(dir, "expect.xml");
    // One at a time, so the ✗ lines (printed as answers come) are in line order.
    const result = await replay(target.url, "--expect-status", "202", "--junit", junit, "--concurrency", "1");
    expect(result.code).toBe(1);
    const identifies = messages.filter((m) => m.type === "identify").map(lineOf);
    expect([...result.stdout.matchAll(/^✗ \S+:(\d+) identify \S+: status 200 not in 202$/gm)].map((m) => Number(m[1]))).toEqual(identifies);
    expect(result.stdout).toContain(`${identifies.length} messages answered outside --expect-status 202`);
    expect([...readFileSync(junit, "utf8").matchAll(/<failure message="status 200 not in 202" type="expect-status"/g)]).toHaveLength(identifies.length);

    expect((await replay(target.url, "--expect-status", "2xx")).code).toBe(0);
    const bad = await replay(target.url, "--expect-status", "2xy");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--expect-status.*"2xy"/);
  });

  it("selectors pick lines, compose with --type and --from-line, and --dry-run counts them", async () => {
    const target = await server();
    const sent = async (...args: string[]): Promise<number[]> => {
      const before = target.requests.length;
      const result = await replay(target.url, "--concurrency", "1", ...args);
      expect(result.code, result.stderr).toBe(0);
      return target.requests.slice(before).map((r) => lineOf(parse(r)));
    };
    expect(await sent("--line", "7")).toEqual([7]);
    expect(await sent("--line", "10-12", "--line", "3")).toEqual([3, 10, 11, 12]);
    expect(await sent("--message-id", "m-5", "--message-id", "m-9")).toEqual([5, 9]);
    expect(await sent("--user-id", "u2")).toEqual(messages.filter((m) => m.userId === "u2").map(lineOf));
    expect(await sent("--user-id", "u2", "--type", "identify")).toEqual(messages.filter((m) => m.userId === "u2" && m.type === "identify").map(lineOf));
    expect(await sent("--line", "1-20", "--from-line", "15", "--type", "track")).toEqual([15, 17, 18, 19]);

    const dry = await replay(target.url, "--dry-run", "--json", "--user-id", "u1", "--line", "1-10");
    expect(JSON.parse(dry.stdout.trim().split("\n").at(-1) as string)).toMatchObject({ event: "summary", messages: 2, filtered: 8, sent: 0 });
    const bad = await replay(target.url, "--line", "5-2");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--line.*"5-2"/);
  });

  it("--shard K/N: the shards cover every line once, each user in one shard; their results concatenate for --compare", async () => {
    const target = await receiver("v1");
    const shards = 3;
    const files: string[] = [];
    const usersPerShard: Set<string>[] = [];
    for (let k = 1; k <= shards; k++) {
      const before = target.requests.length;
      const results = join(dir, `shard-${k}.ndjson`);
      files.push(results);
      expect((await replay(target.url, "--shard", `${k}/${shards}`, "--results", results)).code).toBe(0);
      usersPerShard.push(new Set(target.requests.slice(before).map((r) => parse(r).userId)));
    }
    const lines = target.requests.map((r) => lineOf(parse(r))).sort((a, b) => a - b);
    expect(lines).toEqual(messages.map(lineOf));
    for (const user of USERS) expect(usersPerShard.filter((users) => users.has(user))).toHaveLength(1);

    const all = join(dir, "all-shards.ndjson");
    writeFileSync(
      all,
      files
        .reverse()
        .map((f) => readFileSync(f, "utf8"))
        .join(""),
    );
    const compared = await replay(target.url, "--compare", all, "--ignore", "$.requestId");
    expect(compared.code).toBe(0);
    expect(compared.stdout).toContain("30 same, 0 changed, 0 new, 0 missing");
    // One shard against the whole file: the other shards' lines are not "missing".
    const one = await replay(target.url, "--shard", "2/3", "--compare", all, "--ignore", "$.requestId");
    expect(one.stdout).toMatch(/: \d+ same, 0 changed, 0 new, 0 missing/);
  });

  it("after Ctrl-C the results file holds a complete line for every finished message, in order", async () => {
    // Line 6 never gets an answer; every other line is answered at once, but u2's later lines wait behind it (per-user order).
    const target = await server((request, res) => {
      if (lineOf(parse(request)) !== 6) res.end("{}");
    });
    const results = join(dir, "interrupted.ndjson");
    const replay = startInProcess(["replay", input, "--url", target.url, "--timeout", "1s", "--results", results, "--verbose"]);
    const waiting = messages.filter((m) => m.userId === "u2" && lineOf(m) > 6).map(lineOf);
    // Interrupt once replay itself has logged an answer (--verbose: `< 200`) for every message but line 6 and those behind it.
    const answered = messages.length - waiting.length - 1;
    await expect.poll(() => (replay.stderr().match(/^< 200 /gm) ?? []).length, { interval: 10 }).toBeGreaterThanOrEqual(answered);
    replay.stop("SIGINT");
    const result = await replay.done;
    expect(result.code).toBe(130);
    const text = readFileSync(results, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(readLines(results).map((r) => r["line"])).toEqual(messages.map(lineOf).filter((n) => n !== 6 && !waiting.includes(n)));
  });
});
