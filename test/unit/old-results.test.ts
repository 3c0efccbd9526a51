import { openSync, readFileSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WebhookCliError } from "../../src/errors.js";
import { answersInOrder, Comparison } from "../../src/regress/run-comparison.js";
import { OldResults } from "../../src/regress/old-results.js";
import { scanResults } from "../../src/regress/results-file.js";
import { answerOfResult, MAX_RUNS, type Answer, type ResultsIndex } from "../../src/regress/results-read.js";
import { formatResultLine, keepBody, messageFacts, resultLine, type ResultLine } from "../../src/regress/results.js";
import { tempDir } from "../helpers/setup.js";

const { dir } = tempDir("old-results-");
let files = 0;

/** A results line for `line` whose answer's body says `total`. */
function result(line: number, total = line * 10, user = `u${line % 3}`): ResultLine {
  const facts = messageFacts({ type: line % 4 === 0 ? "identify" : "track", event: "E", userId: user, messageId: `m-${line}` }, user);
  return resultLine({
    line,
    facts,
    delivered: true,
    urls: [
      {
        url: "http://127.0.0.1:1/",
        status: 200,
        attempts: 1,
        ms: 1,
        error: null,
        response: { contentType: "application/json", body: keepBody(JSON.stringify({ total })) },
      },
    ],
  });
}

const text = (lines: (number | ResultLine)[]): string => lines.map((l) => formatResultLine(typeof l === "number" ? result(l) : l)).join("");

/** Scans `content` as the --compare file, runs `afterScan`, then opens it for the merge. */
async function open(
  content: string,
  options: ConstructorParameters<typeof OldResults>[3] = {},
  afterScan: (path: string) => void = () => {},
): Promise<{ old: OldResults; index: ResultsIndex; path: string }> {
  files += 1;
  const path = join(dir, `old-${files}.ndjson`);
  writeFileSync(path, content);
  const index = (await scanResults(path, "old.ndjson")) as ResultsIndex;
  afterScan(path);
  return { old: new OldResults(path, "old.ndjson", index, options), index, path };
}

function all(old: OldResults): Answer[] {
  const seen: Answer[] = [];
  old.rest((answer) => seen.push(answer));
  return seen;
}

const totalOf = (answer: Answer | undefined): unknown => {
  const body = answer?.urls[0]?.body;
  return body?.kind === "text" ? (JSON.parse(body.text) as { total: number }).total : undefined;
};

describe("OldResults: the --compare file read in line order beside the run", () => {
  it("merges shards concatenated in any order into line order, the later of two answers for a line winning", async () => {
    // Three shards in the order 3, 1, 2, then a resumed run that answered 5 and 6 again.
    const shards = [
      [3, 6, 9],
      [1, 4, 7, 10],
      [2, 5, 8],
    ];
    const { old, index } = await open(text([...shards.flat(), result(5, 555), result(6, 666)]));
    expect(index.runs.map((run) => run.line)).toEqual([1, 4, 8, 11]);
    const seen = all(old);
    old.close();
    expect(seen.map((a) => a.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(seen.map(totalOf)).toEqual([10, 20, 30, 40, 555, 666, 70, 80, 90, 100]);
  });

  it("merges hundreds of runs (one per shard) without losing or repeating a line", async () => {
    const runs = 300;
    const lines = Array.from({ length: 3000 }, (_, i) => i + 1);
    const shuffled = Array.from({ length: runs }, (_, k) => lines.filter((line) => line % runs === (k * 7) % runs)).flat();
    const { old, index } = await open(text(shuffled));
    expect(index.runs).toHaveLength(runs);
    expect(all(old).map((a) => a.line)).toEqual(lines);
    old.close();
  });

  it("takes each line's answer as the run reaches it, handing on the older ones it passed", async () => {
    const { old } = await open(text([1, 2, 4, 5, 7, 9]));
    const passed: number[] = [];
    const pass = (answer: Answer): number => passed.push(answer.line);
    expect(old.take(2, pass)?.line).toBe(2);
    expect(old.take(3, pass)).toBeUndefined(); // a new line: not in the old file
    expect(old.take(7, pass)?.line).toBe(7);
    expect(passed).toEqual([1, 4, 5]);
    expect(() => old.take(7, pass)).toThrow(RangeError);
    expect(all(old).map((a) => a.line)).toEqual([9]);
    old.close();
  });

  it("keys a recording by its own line numbers: BOM, CRLF, blank and unanswered lines, no newline at the end", async () => {
    const envelope = {
      receivedAt: "2024-01-01T00:00:00.000Z",
      method: "POST",
      path: "/",
      headers: {},
      signatureValid: true,
      body: { type: "track", event: "E", userId: "u" },
    };
    const answered = (total: number): string => JSON.stringify({ ...envelope, response: { status: 200, ms: 1, headers: {}, body: { total } } });
    const content = `\uFEFF${answered(10)}\r\n\r\n${JSON.stringify(envelope)}\r\n${answered(40)}\r\n${answered(50)}`;
    const { old, index } = await open(content);
    expect(index).toMatchObject({ answers: 3, unanswered: 1, runs: [{ offset: 0, line: 1 }] });
    const seen = all(old);
    expect(seen.map((a) => [a.line, a.urls[0]?.body])).toEqual([
      [1, { kind: "value", value: { total: 10 } }],
      [4, { kind: "value", value: { total: 40 } }],
      [5, { kind: "value", value: { total: 50 } }],
    ]);
    old.close();
  });

  it("passes over the lines the run cannot send without parsing them, and stops after its last line", async () => {
    const content = text(Array.from({ length: 40 }, (_, i) => i + 1));
    // After the scan, line 5's answer is spoiled (its `{"line":5,` kept) and so is everything after line 13: none is parsed.
    const spoil = (path: string): void => {
      const spoiled = content.split("\n");
      spoiled[4] = spoiled[4]?.replace(/"status":200/, '"status":999') as string;
      const at = spoiled.slice(0, 13).join("\n").length + 1;
      writeFileSync(path, `${spoiled.join("\n").slice(0, at)}${"#".repeat(content.length - at)}`);
    };
    const { old } = await open(content, { wanted: (line) => line >= 10 && line <= 12, last: 12 }, spoil);
    const passed: number[] = [];
    expect(old.take(11, (answer) => passed.push(answer.line))?.line).toBe(11);
    expect(passed).toEqual([10]);
    expect(all(old).map((a) => a.line)).toEqual([12]);
    old.close();
  });

  it("parses every line when a line's first `line` key is not the one that counts (a repeated key)", async () => {
    const repeated = `${formatResultLine(result(1)).trimEnd().slice(0, -1)},"line":3}\n`;
    const { old, index } = await open(`${repeated}${text([2])}`);
    expect(index.quickKeys).toBe(false);
    expect(all(old).map((a) => a.line)).toEqual([2, 3]);
    old.close();
  });

  it("stops with an error naming the file when it changed under the run", async () => {
    // Longer than the reads ahead: line 1500 is read only when the run gets there.
    const { old, path } = await open(text(Array.from({ length: 2000 }, (_, i) => i + 1)));
    const fd = openSync(path, "r+");
    writeSync(fd, "garbage", readFileSync(path, "utf8").indexOf('{"line":1500,'));
    closeSync(fd);
    expect(old.take(1, () => {})?.line).toBe(1);
    const error = (() => {
      try {
        old.take(1600, () => {});
      } catch (e) {
        return e as WebhookCliError;
      }
      return undefined;
    })();
    expect(error?.describe()).toMatch(/^old\.ndjson:1500: changed since it was checked/);
    old.close();
  });
});

describe("scanning the --compare file", () => {
  it(`refuses a file in no order (more than ${MAX_RUNS} runs), naming the file and line`, async () => {
    const path = join(dir, "shuffled.ndjson");
    writeFileSync(path, text(Array.from({ length: MAX_RUNS + 5 }, (_, i) => MAX_RUNS + 5 - i)));
    const error = await scanResults(path, "shuffled.ndjson").catch((e: unknown) => e as WebhookCliError);
    expect((error as WebhookCliError).describe()).toMatch(
      new RegExp(
        `^shuffled\\.ndjson:${MAX_RUNS + 1}: answers out of input order: line 5 after line 6, and ${MAX_RUNS} runs in order already .*; sort the file by "line"$`,
      ),
    );
  });

  it("returns nothing when interrupted, rather than judging what it read", async () => {
    const path = join(dir, "some.ndjson");
    writeFileSync(path, text([1]));
    const controller = new AbortController();
    controller.abort();
    expect(await scanResults(path, "some.ndjson", { signal: controller.signal })).toBeUndefined();
  });
});

describe("Comparison over the merge", () => {
  it("compares the new answers as they come in line order; old ones in scope and not answered are missing", async () => {
    const { old } = await open(text([result(1), result(2), result(3, 31), result(5), result(6), result(8)]));
    // The run sends tracks only (every 4th line is an identify): line 8 is out of its scope.
    const comparison = new Comparison(old, {}, (before) => before.facts.type === "track");
    const statuses = [1, 3, 4, 6].map((line) => comparison.add(answerOfResult(result(line))).status);
    expect(statuses).toEqual(["same", "changed", "new", "same"]);
    expect(comparison.finish()).toEqual({ summary: { same: 2, changed: 1, new: 1, missing: 2 }, missing: [2, 5] });
    expect(() => comparison.add(answerOfResult(result(6)))).toThrow(RangeError);
    old.close();
  });

  it("counts nothing missing after an interruption, and stops reading the rest when the signal comes", async () => {
    const comparison = new Comparison(answersInOrder(new Map([1, 2, 3].map((line) => [line, answerOfResult(result(line))]))));
    comparison.add(answerOfResult(result(1)));
    const controller = new AbortController();
    controller.abort();
    expect(
      await new Comparison(answersInOrder(new Map(Array.from({ length: 3000 }, (_, i) => [i + 1, answerOfResult(result(i + 1))])))).drain(controller.signal),
    ).toBe(false);
    expect(comparison.finish(true)).toEqual({ summary: { same: 1, changed: 0, new: 0, missing: 0 }, missing: [] });
  });
});
