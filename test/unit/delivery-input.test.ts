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
    expect(parsed.messages).toEqual([{ message: TRACK, line: 1, where: "one.json" }]);
  });

  it("takes a JSON array, numbering elements from 1", () => {
    const parsed = parseMessages(JSON.stringify([TRACK, DELETE]), "many.json");
    expect(parsed.messages.map((m) => [m.line, m.where, m.message.type])).toEqual([
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
    expect(errorOf(() => parseMessages("[{\"type\":", "e.json")).message).toMatch(/not valid JSON/);
    expect(errorOf(() => parseMessages("42", "e.json")).message).toMatch(/expected a JSON object/);
  });

  it("reports a typo in a pretty-printed object as a JSON error of the document", () => {
    const error = errorOf(() => parseMessages('{\n  "type": "track",\n  oops\n}', "pretty.json"));
    expect(error.describe()).toMatch(/^pretty\.json: not valid JSON/);
  });

  it("keeps unknown keys as warnings naming place and key", () => {
    const parsed = parseMessages(`${JSON.stringify({ ...TRACK, extra: 1 })}\n`, "log.ndjson");
    expect(parsed.messages).toHaveLength(1);
    expect(parsed.warnings).toEqual(['log.ndjson:1: unknown key "extra" for type track']);
  });
});
