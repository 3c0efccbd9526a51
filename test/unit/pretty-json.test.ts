import { describe, expect, it } from "vitest";
import { MAX_PRETTY_CHARS, prettyJson } from "../../src/json/pretty.js";
import { cpuMs } from "../helpers/cpu-time.js";

/** A reproducible JSON value of mixed shapes and depths. */
function randomValue(seed: number, depth = 0): unknown {
  let state = seed;
  const next = (): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const build = (level: number): unknown => {
    const pick = next();
    if (level > 6 || pick < 0.3) return [null, true, 1.5, -0, 1e21, "text", 'quo"te\n', "é😀"][Math.floor(next() * 8)];
    const size = Math.floor(next() * 5);
    if (pick < 0.65) return Array.from({ length: size }, () => build(level + 1));
    return Object.fromEntries(Array.from({ length: size }, (_, i) => [`k${i}${next() < 0.2 ? '"\\' : ""}`, build(level + 1)]));
  };
  return build(depth);
}

describe("prettyJson", () => {
  it("is JSON.stringify(value, null, 2) whenever that fits, on 300 values of every shape", () => {
    let nested = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const value = randomValue(seed);
      const expected = JSON.stringify(value, null, 2);
      expect(prettyJson(value), `seed ${seed}`).toBe(expected);
      // The size is counted exactly: a bound one character short refuses it.
      expect(prettyJson(value, expected.length - 1), `seed ${seed}`).toBeNull();
      expect(prettyJson(value, expected.length), `seed ${seed}`).toBe(expected);
      if (/\n {6}/.test(expected)) nested += 1;
    }
    // The values are not all flat: many nest three levels or more.
    expect(nested).toBeGreaterThan(30);
  });

  it("refuses the deeply nested 1 MiB body that printed as 500 MB, without building it", () => {
    const text = `${'{"a":'.repeat(499)}[${Array(260_000).fill("0").join(",")}]${"}".repeat(499)}`;
    expect(text.length).toBeLessThan(1024 * 1024);
    expect(cpuMs(() => expect(prettyJson(JSON.parse(text))).toBeNull())).toBeLessThan(2_000);
  });

  it("prints a flat 1 MiB array of empty objects (2.4 MB pretty: under the bound)", () => {
    const value = JSON.parse(`[${"{},".repeat(349_000).slice(0, -1)}]`) as unknown[];
    const pretty = prettyJson(value);
    expect(pretty?.length).toBeLessThan(MAX_PRETTY_CHARS);
    expect(pretty?.startsWith("[\n  {},\n  {},")).toBe(true);
  });

  it("prints scalars and empty containers as they are", () => {
    expect(prettyJson("x")).toBe('"x"');
    expect(prettyJson([])).toBe("[]");
    expect(prettyJson({})).toBe("{}");
    expect(prettyJson(null)).toBe("null");
  });
});
