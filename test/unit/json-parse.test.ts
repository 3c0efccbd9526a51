import { describe, expect, it } from "vitest";
import { jsonTooDeep, parseUntrustedJson } from "../../src/json/parse.js";

describe("jsonTooDeep / parseUntrustedJson", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  it("counts arrays and objects, up to the limit inclusive", () => {
    expect(jsonTooDeep(nested(512))).toBe(false);
    expect(jsonTooDeep(nested(513))).toBe(true);
    expect(jsonTooDeep(`{"a":{"b":[{}]}}`, 3)).toBe(true);
    expect(jsonTooDeep(`{"a":{"b":[1]}}`, 3)).toBe(false);
  });

  it("skips brackets inside strings, escaped quotes included", () => {
    expect(jsonTooDeep(`["[[[[\\"[[[[", "\\\\"]`, 1)).toBe(false);
    expect(jsonTooDeep(`["\\\\", [[]]]`, 2)).toBe(true);
  });

  it("parseUntrustedJson throws a SyntaxError naming the limit, and parses the rest like JSON.parse", () => {
    expect(() => parseUntrustedJson(nested(100_000))).toThrow(/nested deeper than 512 levels/);
    expect(() => parseUntrustedJson(nested(100_000))).toThrow(SyntaxError);
    expect(parseUntrustedJson(`{"a":[1,"]"]}`)).toEqual({ a: [1, "]"] });
    expect(() => parseUntrustedJson("{oops")).toThrow(SyntaxError);
  });
});
