import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { flagOfField } from "../../src/cli/shell/field-flags.js";
import { UsageError } from "../../src/errors.js";
import { compareAnswers, formatComparison } from "../../src/regress/message-comparison.js";
import { answersInOrder, Comparison, compareResults, comparisonFailed, formatCompareSummary } from "../../src/regress/run-comparison.js";
import { ABSENT, diffJson } from "../../src/regress/json-diff.js";
import { formatPath, parseJsonPath } from "../../src/regress/jsonpath.js";
import type { Answer, AnswerBody } from "../../src/regress/results-read.js";

function answer(line: number, status: number | null, body: AnswerBody, options: { userId?: string; event?: string; contentType?: string } = {}): Answer {
  return {
    line,
    facts: { type: "track", userId: options.userId ?? "user-42", messageId: undefined, event: options.event ?? "Order Completed" },
    delivered: status !== null && status < 300,
    urls: [{ url: "http://x/", status, error: status === null ? "timeout" : null, contentType: options.contentType ?? "application/json", body }],
  };
}
const text = (t: string): AnswerBody => ({ kind: "text", text: t });
const paths = (...list: string[]) => list.map((p) => parseJsonPath(p));

describe("parseJsonPath", () => {
  it("reads the supported subset", () => {
    expect(parseJsonPath("$").segments).toEqual([]);
    expect(parseJsonPath("$.requestId").segments).toEqual([{ key: "requestId" }]);
    expect(parseJsonPath("$.data.items[*].id").segments).toEqual([{ key: "data" }, { key: "items" }, { any: true }, { key: "id" }]);
    expect(parseJsonPath('$[\'a.b\']["c\\"d"][12].*').segments).toEqual([{ key: "a.b" }, { key: 'c"d' }, { index: 12 }, { any: true }]);
  });

  it("names the flag and the path when it cannot read it", () => {
    for (const bad of ["requestId", "$.", "$..a", "$[", "$['a'", "$[-1]", "$[a]", "$ .a", "$.a[1"]) {
      const error = (() => {
        try {
          parseJsonPath(bad);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, bad).toBeInstanceOf(UsageError);
      expect((error as UsageError).describe(flagOfField)).toContain(`--ignore: invalid path "${bad}"`);
    }
  });

  it("formats concrete paths back", () => {
    expect(formatPath(["data", "items", 2, "a b", "it's"])).toBe("$.data.items[2]['a b']['it\\'s']");
  });
});

describe("diffJson", () => {
  it("ignores key order and finds changed, added and removed values in document order", () => {
    const diff = diffJson({ a: 1, b: { c: [1, 2, 3] }, d: "x" }, { d: "x", b: { c: [1, 5] }, a: 1, e: null });
    expect(diff.differences).toEqual([
      { path: ["b", "c", 1], before: 2, after: 5 },
      { path: ["b", "c", 2], before: 3, after: ABSENT },
      { path: ["e"], before: ABSENT, after: null },
    ]);
    expect(diffJson({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }).total).toBe(0);
  });

  it("treats an object and an array, or a number and a string, as different", () => {
    expect(diffJson({ a: {} }, { a: [] }).total).toBe(1);
    expect(diffJson({ a: 1 }, { a: "1" }).total).toBe(1);
  });

  it("skips ignored paths with everything beneath them, wildcards included", () => {
    const before = {
      requestId: "r1",
      data: {
        items: [
          { id: 1, n: "a" },
          { id: 2, n: "b" },
        ],
      },
      meta: { t: 1 },
    };
    const after = {
      requestId: "r2",
      data: {
        items: [
          { id: 9, n: "a" },
          { id: 8, n: "c" },
        ],
      },
      meta: { t: 2 },
    };
    const diff = diffJson(before, after, { ignore: paths("$.requestId", "$.data.items[*].id", "$.meta") });
    expect(diff.differences).toEqual([{ path: ["data", "items", 1, "n"], before: "b", after: "c" }]);
    expect(diffJson(before, after, { ignore: paths("$") }).total).toBe(0);
    // An ignored key present on one side only is ignored too.
    expect(diffJson({ a: 1 }, { a: 1, requestId: "r" }, { ignore: paths("$.requestId") }).total).toBe(0);
    expect(diffJson([{ id: 1 }], [{ id: 2 }], { ignore: paths("$[0].id") }).total).toBe(0);
    expect(diffJson([{ id: 1 }, { id: 1 }], [{ id: 2 }, { id: 2 }], { ignore: paths("$[0].id") }).total).toBe(1);
  });

  it("lists the first `limit` differences and counts the rest", () => {
    const diff = diffJson({ a: [1, 2, 3, 4, 5] }, { a: [0, 0, 0, 0, 0] }, { limit: 2 });
    expect(diff.differences.map((d) => d.path)).toEqual([
      ["a", 0],
      ["a", 1],
    ]);
    expect(diff.total).toBe(5);
  });

  it("walks a body nested 200 000 deep without overflowing the stack", () => {
    const depth = 200_000;
    const before = JSON.parse(`${"[".repeat(depth)}1${"]".repeat(depth)}`);
    const after = JSON.parse(`${"[".repeat(depth)}2${"]".repeat(depth)}`);
    const diff = diffJson(before, after);
    expect(diff.total).toBe(1);
    expect(diff.differences[0]?.path.length).toBe(depth);
  });
});

describe("compareAnswers", () => {
  it("reports a changed status alone (the body that comes with it is in the results file)", () => {
    expect(compareAnswers(answer(1, 200, text('{"ok":true}')), answer(1, 500, text('{"error":"boom"}')))).toEqual(["status 200 → 500"]);
    expect(compareAnswers(answer(1, 200, text("ok")), answer(1, null, { kind: "none" }))).toEqual(["status 200 → no answer (timeout)"]);
  });

  it("compares JSON bodies structurally, whatever the spacing and key order", () => {
    expect(compareAnswers(answer(1, 200, text('{"a":1,"b":[1,2]}')), answer(1, 200, text('{ "b": [1, 2], "a": 1.0 }')))).toEqual([]);
    expect(compareAnswers(answer(1, 200, text('{"total":10}')), answer(1, 200, text('{"total":12}')))).toEqual(["body $.total: 10 → 12"]);
  });

  it("compares a recording's parsed body with a results line's text", () => {
    expect(compareAnswers(answer(1, 200, { kind: "value", value: { a: 1 } }), answer(1, 200, text('{"a":1}')))).toEqual([]);
  });

  it("compares text bodies as text and reports a switch between JSON and text", () => {
    expect(compareAnswers(answer(1, 200, text("hello")), answer(1, 200, text("hello")))).toEqual([]);
    expect(compareAnswers(answer(1, 200, text("hello")), answer(1, 200, text("hullo")))).toEqual(['body: text "hello" → text "hullo"']);
    expect(compareAnswers(answer(1, 200, text('{"a":1}')), answer(1, 200, text("oops")))).toEqual(['body: JSON {1 key} → text "oops"']);
  });

  it("compares digests, and a digest with the text it was taken of", () => {
    const big = "z".repeat(70_000);
    const sha = createHash("sha256").update(big).digest("hex");
    const hash = (sha256: string): AnswerBody => ({ kind: "hash", sha256, size: 70_000 });
    expect(compareAnswers(answer(1, 200, hash(sha)), answer(1, 200, hash(sha)))).toEqual([]);
    expect(compareAnswers(answer(1, 200, hash(sha)), answer(1, 200, text(big)))).toEqual([]);
    expect(compareAnswers(answer(1, 200, hash(sha)), answer(1, 200, hash("b".repeat(64))))[0]).toMatch(
      /^body: sha256 [0-9a-f]{12}… \(70000 bytes\) → sha256 bbbbbbbbbbbb…/,
    );
  });

  it("reports a changed content-type, ignoring case and spaces", () => {
    expect(compareAnswers(answer(1, 200, text("{}")), answer(1, 200, text("{}"), { contentType: "text/html" }))).toEqual([
      "content-type application/json → text/html",
    ]);
    expect(
      compareAnswers(
        answer(1, 200, text("{}"), { contentType: "Application/JSON; charset=utf-8" }),
        answer(1, 200, text("{}"), { contentType: "application/json;charset=utf-8" }),
      ),
    ).toEqual([]);
  });

  it("matches URLs by position and prefixes the URL number when there are several", () => {
    const two = (s1: number, s2: number): Answer => {
      const base = answer(1, s1, text("{}"));
      return { ...base, urls: [...base.urls, { ...(base.urls[0] as Answer["urls"][number]), url: "http://y/", status: s2 }] };
    };
    expect(compareAnswers(two(200, 200), two(200, 503))).toEqual(["url 2: status 200 → 503"]);
    expect(compareAnswers(answer(1, 200, text("{}")), two(200, 200))).toEqual(["answers: 1 URL(s) → 2"]);
  });

  it("applies --ignore paths and elides the middle of a very deep path", () => {
    const ignore = paths("$.requestId");
    expect(compareAnswers(answer(1, 200, text('{"requestId":"a","x":1}')), answer(1, 200, text('{"requestId":"b","x":1}')), { ignore })).toEqual([]);
    const deep = (v: number) => text(`${'{"k":'.repeat(40)}${v}${"}".repeat(40)}`);
    const [line] = compareAnswers(answer(1, 200, deep(1)), answer(1, 200, deep(2)));
    expect(line).toBe(`body $${".k".repeat(12)}…(16 levels)…${".k".repeat(12)}: 1 → 2`);
  });
});

describe("Comparison", () => {
  const old = new Map<number, Answer>([
    [1, answer(1, 200, text('{"total":10}'))],
    [2, answer(2, 200, text("{}"), { userId: "user-7" })],
    [3, answer(3, 200, text("{}"))],
    [5, answer(5, 200, text("{}"))],
  ]);

  it("counts same, changed, new and missing, and formats one line per difference", () => {
    const now = new Map<number, Answer>([
      [1, answer(1, 200, text('{"total":12}'))],
      [2, answer(2, 500, text("{}"), { userId: "user-7" })],
      [3, answer(3, 200, text("{}"))],
      [4, answer(4, 200, text("{}"))],
    ]);
    const result = compareResults(old, now);
    expect(result.summary).toEqual({ same: 1, changed: 2, new: 1, missing: 1 });
    expect(result.added).toEqual([4]);
    expect(result.missing).toEqual([5]);
    expect(result.changed.flatMap(formatComparison)).toEqual([
      "line 1 (track Order Completed, user-42): body $.total: 10 → 12",
      "line 2 (track Order Completed, user-7): status 200 → 500",
    ]);
    expect(formatCompareSummary("old.ndjson", result.summary)).toBe("compared with old.ndjson: 1 same, 2 changed, 1 new, 1 missing");
    expect(comparisonFailed(result.summary)).toBe(true);
  });

  it("counts as missing only the old lines in this run's scope", () => {
    const comparison = new Comparison(answersInOrder(old), {}, (before) => before.line % 2 === 1);
    comparison.add(answer(1, 200, text('{"total":10}')));
    const { summary, missing } = comparison.finish();
    expect(missing).toEqual([3, 5]);
    expect(summary).toEqual({ same: 1, changed: 0, new: 0, missing: 2 });
    expect(comparisonFailed(summary)).toBe(false);
  });
});
