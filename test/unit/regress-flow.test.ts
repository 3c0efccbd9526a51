import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { comparisonCase, junitXml, withExpectStatus } from "../../src/report/junit.js";
import { answersInOrder, Comparison } from "../../src/regress/run-comparison.js";
import { parseExpectStatus, unexpectedStatuses } from "../../src/regress/expect-status.js";
import { parseJsonPath } from "../../src/regress/jsonpath.js";
import { ResultsFile } from "../../src/regress/results-file.js";
import { readAnswers } from "../helpers/old-results.js";
import { answerOfResult } from "../../src/regress/results-read.js";
import { ResultsOrder } from "../../src/regress/results-order.js";
import { keepBody, messageFacts, resultLine, type MessageOutcome, type ResultLine } from "../../src/regress/results.js";
import { createSelection } from "../../src/replay/select.js";
import { parseShard } from "../../src/replay/shard.js";

/** A small "receiver build": answers per message, as a replay would record them. */
type Build = (line: number, user: string) => { status: number; body: string };

const users = ["user-1", "user-2", "user-3", "user-4", "user-5"];
const log = Array.from({ length: 40 }, (_, i) => ({ line: i + 1, user: users[i % users.length] as string }));

function outcomeOf(build: Build, line: number, user: string): MessageOutcome {
  const answer = build(line, user);
  return {
    line,
    facts: messageFacts({ type: "track", event: "Order Completed", userId: user, messageId: `m-${line}` }, user),
    delivered: answer.status < 300,
    urls: [
      {
        url: "http://127.0.0.1:1/",
        status: answer.status,
        attempts: 1,
        ms: 1,
        error: null,
        response: { contentType: "application/json", body: keepBody(answer.body) },
      },
    ],
  };
}

/** One CI job: the lines of shard K/N, finishing in reverse order, written to `path`. */
function runShard(build: Build, shardText: string | undefined, path: string): void {
  const selection = createSelection(shardText !== undefined ? { shard: parseShard(shardText) } : {});
  const file = new ResultsFile(path);
  const order = new ResultsOrder<ResultLine>();
  const picked = log.filter((entry) => selection.matches({ line: entry.line, type: "track", userId: entry.user, messageId: `m-${entry.line}` }));
  for (const entry of picked) order.admit(entry.line);
  for (const entry of [...picked].reverse()) file.write(order.finish(entry.line, resultLine(outcomeOf(build, entry.line, entry.user))));
  file.close();
}

// A request id that differs on every answer, as real receivers' do.
let requests = 0;
const requestId = (): string => {
  requests += 1;
  return `r-${requests}`;
};
const oldBuild: Build = (line) => ({ status: 200, body: JSON.stringify({ requestId: requestId(), line, total: 10 }) });
const newBuild: Build = (line, user) =>
  user === "user-3"
    ? { status: 500, body: '{"error":"boom"}' }
    : { status: 200, body: JSON.stringify({ total: line === 7 ? 12 : 10, line, requestId: requestId() }) };

describe("results, shards and compare together", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "webhook-cli-regress-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("three shards' results, concatenated, compare with a whole run line for line", async () => {
    const whole = join(dir, "old.ndjson");
    runShard(oldBuild, undefined, whole);
    const lines = readFileSync(whole, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).line);
    expect(lines).toEqual(log.map((e) => e.line)); // input order although they finished in reverse

    const joined = join(dir, "new.ndjson");
    for (const k of [3, 1, 2]) {
      const part = join(dir, `shard-${k}.ndjson`);
      runShard(newBuild, `${k}/3`, part);
      appendFileSync(joined, readFileSync(part));
    }
    const old = await readAnswers(whole, "old.ndjson");
    const now = await readAnswers(joined, "new.ndjson");
    expect(now.answers.size).toBe(log.length);

    const comparison = new Comparison(answersInOrder(old.answers), { ignore: [parseJsonPath("$.requestId")] });
    const changed = [...now.answers.values()]
      .sort((a, b) => a.line - b.line)
      .map((a) => comparison.add(a))
      .filter((r) => r.status === "changed");
    const { summary } = comparison.finish();
    const user3 = log.filter((e) => e.user === "user-3").map((e) => e.line);
    expect(changed.map((r) => r.line)).toEqual([...new Set([7, ...user3])].sort((a, b) => a - b));
    expect(summary).toEqual({ same: log.length - changed.length, changed: changed.length, new: 0, missing: 0 });
    expect(changed.find((r) => r.line === 7)?.changes).toEqual(["body $.total: 10 → 12"]);

    const xml = junitXml({ name: "replay", cases: changed.map(comparisonCase) });
    expect(xml).toContain(`tests="${changed.length}" failures="${changed.length}"`);
    expect(xml).toContain('<testcase name="line 7: track Order Completed, user-2" classname="webhook-cli.replay.compare"');
    expect(xml).toContain('<failure message="body $.total: 10 → 12" type="compare">line 7 (track Order Completed, user-2): body $.total: 10 → 12</failure>');
  });

  it("the same build twice compares the same once --ignore hides the changing field", async () => {
    const a = join(dir, "a.ndjson");
    const b = join(dir, "b.ndjson");
    runShard(oldBuild, undefined, a);
    runShard(oldBuild, undefined, b);
    const old = await readAnswers(a, "a");
    const now = await readAnswers(b, "b");
    const without = new Comparison(answersInOrder(old.answers));
    for (const answer of now.answers.values()) without.add(answer);
    expect(without.finish().summary.changed).toBe(log.length);
    const withIgnore = new Comparison(answersInOrder(old.answers), { ignore: [parseJsonPath("$.requestId")] });
    for (const answer of now.answers.values()) withIgnore.add(answer);
    expect(withIgnore.finish().summary).toEqual({ same: log.length, changed: 0, new: 0, missing: 0 });
  });
});

describe("JUnit cases", () => {
  it("passes unchanged messages and fails changed ones with every difference in the details", () => {
    expect(comparisonCase({ line: 3, label: "identify, u", status: "same", changes: [] })).toEqual({
      name: "line 3: identify, u",
      classname: "webhook-cli.replay.compare",
      time: 0,
    });
    const failed = comparisonCase({ line: 4, label: "track E, u", status: "changed", changes: ["status 200 → 500", "body $.a: 1 → 2"] });
    expect(failed.failure).toEqual({
      message: "status 200 → 500",
      type: "compare",
      details: "line 4 (track E, u): status 200 → 500\nline 4 (track E, u): body $.a: 1 → 2",
    });
  });

  it("adds an --expect-status failure to a replay case, after a delivery failure already there", () => {
    const expected = parseExpectStatus("202");
    const answer = answerOfResult(resultLine(outcomeOf(() => ({ status: 200, body: "{}" }), 1, "u")));
    const problems = unexpectedStatuses(answer.urls, expected);
    const base = { name: "line 1: track u", classname: "webhook-cli.replay", time: 0.01 };
    expect(withExpectStatus(base, problems).failure).toEqual({ message: "status 200 not in 202", type: "expect-status" });
    expect(withExpectStatus(base, [])).toBe(base);
    const failed = { ...base, failure: { message: "http://x/: timeout", type: "delivery" } };
    expect(withExpectStatus(failed, problems).failure).toEqual({
      message: "http://x/: timeout",
      type: "delivery",
      details: "http://x/: timeout\nstatus 200 not in 202",
    });
  });
});
