import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { parseMessages } from "../../src/messages/input.js";

const TRACK = { version: 1, type: "track", userId: "u_1", event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" };
const DELETE = { type: "delete", userId: "u_2", timestamp: "2024-01-01T00:00:00.000Z" };

function errorOf(fn: () => unknown): InputError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error("expected an InputError");
}

describe("parseMessages (send's input)", () => {
  it("takes one JSON object, even pretty-printed", () => {
    const parsed = parseMessages(JSON.stringify(TRACK, null, 2), "one.json");
    expect(parsed.messages).toEqual([{ message: TRACK, body: JSON.stringify(TRACK), line: 1, where: "one.json:1" }]);
  });

  it("takes a JSON array, numbering elements from 1", () => {
    const parsed = parseMessages(JSON.stringify([TRACK, DELETE]), "many.json");
    expect(parsed.messages.map((m) => [m.line, m.where, m.message?.type])).toEqual([
      [1, "many.json: [0]", "track"],
      [2, "many.json: [1]", "delete"],
    ]);
  });

  it("takes NDJSON with line numbers counting blank lines; BOM and CR stripped", () => {
    const text = `\uFEFF${JSON.stringify(TRACK)}\r\n\r\n${JSON.stringify(DELETE)}\r\n`;
    const parsed = parseMessages(text, "log.ndjson");
    expect(parsed.messages.map((m) => [m.line, m.where])).toEqual([
      [1, "log.ndjson:1"],
      [3, "log.ndjson:3"],
    ]);
  });

  it("names the line of an NDJSON line that is not JSON", () => {
    const error = errorOf(() => parseMessages(`${JSON.stringify(TRACK)}\n{oops}\n`, "log.ndjson"));
    expect(error.describe()).toMatch(/^log\.ndjson:2: not valid JSON/);
  });

  it("names file, line and key of an invalid message, counting the other problems", () => {
    const bad = { ...TRACK, event: 5 } as Record<string, unknown>;
    delete bad["userId"];
    const error = errorOf(() => parseMessages(`${JSON.stringify(TRACK)}\n${JSON.stringify(bad)}\n`, "log.ndjson"));
    expect(error.source).toMatchObject({ file: "log.ndjson", line: 2, key: "userId" });
    expect(error.message).toMatch(/missing required key "userId".*\(and 1 more problem\); nothing was sent/);
  });

  it("names the index and key inside a JSON array", () => {
    const error = errorOf(() => parseMessages(JSON.stringify([TRACK, { type: "nope" }]), "many.json"));
    expect(error.describe()).toMatch(/^many\.json: key "\[1\]\.type": key "type": expected one of/);
  });

  it("refuses empty input, an empty array, a broken array and non-objects", () => {
    expect(errorOf(() => parseMessages(" \n", "e.json")).message).toMatch(/input is empty/);
    expect(errorOf(() => parseMessages("[]", "e.json")).message).toMatch(/array is empty/);
    expect(errorOf(() => parseMessages('[{"type":', "e.json")).message).toMatch(/not valid JSON/);
    expect(errorOf(() => parseMessages("42", "e.json")).message).toMatch(/expected a JSON object/);
  });

  it("reports a typo in a pretty-printed object as a JSON error naming the line the object starts on", () => {
    const error = errorOf(() => parseMessages('{\n  "type": "track",\n  oops\n}', "pretty.json"));
    expect(error.describe()).toMatch(/^pretty\.json:1: not valid JSON/);
  });

  it("takes concatenated JSON values (generate --pretty), naming each by the line it starts on", () => {
    const text = `${JSON.stringify(TRACK, null, 2)}\n${JSON.stringify(DELETE, null, 2)}${JSON.stringify({ ...TRACK, event: 'x{"}' })}\n`;
    const parsed = parseMessages(text, "pretty.json");
    expect(parsed.messages.map((m) => [m.where, m.message?.type])).toEqual([
      ["pretty.json:1", "track"],
      ["pretty.json:9", "delete"],
      ["pretty.json:13", "track"],
    ]);
    expect(parsed.messages[2]?.message).toMatchObject({ event: 'x{"}' });
  });

  it("--raw: each value's text as read, problems as warnings; input that is not JSON is one body", () => {
    const pretty = JSON.stringify({ type: "track", userId: "u" }, null, 2);
    const parsed = parseMessages(`${pretty}\n[1, 2]\n`, "bad.json", { raw: true });
    expect(parsed.messages.map((m) => [m.body, m.message])).toEqual([
      [pretty, undefined],
      ["[1, 2]", undefined],
    ]);
    expect(parsed.warnings[0]).toMatch(/^bad\.json:1: missing required key "version" \(sent anyway: --raw\)$/);
    expect(parsed.warnings.at(-1)).toMatch(/^bad\.json:5: expected a JSON object, got an array/);
    const text = parseMessages("not json at all\n", "x.txt", { raw: true });
    expect(text.messages).toEqual([{ message: undefined, body: "not json at all\n", line: 1, where: "x.txt" }]);
    expect(text.warnings[0]).toMatch(/^x\.txt: not valid JSON .*sent whole, as read \(--raw\)$/);
    const valid = parseMessages(` ${JSON.stringify(TRACK)} `, "ok.json", { raw: true });
    expect(valid.messages).toEqual([{ message: TRACK, body: JSON.stringify(TRACK), line: 1, where: "ok.json:1" }]);
    expect(valid.warnings).toEqual([]);
  });

  it("keeps unknown keys as warnings naming place and key", () => {
    const parsed = parseMessages(`${JSON.stringify({ ...TRACK, extra: 1 })}\n`, "log.ndjson");
    expect(parsed.messages).toHaveLength(1);
    expect(parsed.warnings).toEqual(['log.ndjson:1: unknown key "extra" for type track']);
  });
});
