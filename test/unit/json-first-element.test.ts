import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sign } from "../../src/signing/x-signature.js";
import { firstElementBytes, isJsonArrayBody } from "../../src/json/first-element.js";
import { cpuMs } from "../helpers/cpu-time.js";

const bytes = (text: string) => Buffer.from(text, "utf8");
/** Element 0 as text, or null. */
function first(text: string | Buffer): string | null {
  const raw = typeof text === "string" ? bytes(text) : text;
  const span = firstElementBytes(raw);
  return span === null ? null : Buffer.from(raw.subarray(span.start, span.end)).toString("utf8");
}

interface CapturedRequest {
  headers: [string, string][];
  body: { base64: string };
  signature?: { covers: string; firstElementText?: string };
}
interface Fixture {
  scenario: string;
  entry: string;
  settings: { sharedSecret?: string };
  requests: CapturedRequest[];
}
const dir = new URL("../../fixtures/actions/captured/", import.meta.url);
const fixtures = readdirSync(dir)
  .filter((name) => name.endsWith(".json") && name !== "manifest.json" && name !== "responses.json")
  .map((name) => JSON.parse(readFileSync(new URL(name, dir), "utf8")) as Fixture);
const batches = fixtures.filter((f) => f.entry.includes("performBatch"));

describe("firstElementBytes on the real destination's batches", () => {
  it("has batch fixtures, most of them signed over the first element", () => {
    expect(batches.length).toBeGreaterThanOrEqual(8);
    expect(batches.filter((f) => f.requests[0]?.signature?.covers === "first element").length).toBeGreaterThanOrEqual(5);
  });

  it.each(batches.map((f) => [f.scenario, f] as const))("%s", (_name, fixture) => {
    const request = fixture.requests[0];
    if (!request) throw new Error("a batch fixture without a request");
    const raw = Buffer.from(request.body.base64, "base64");
    expect(isJsonArrayBody(raw)).toBe(true);
    const span = firstElementBytes(raw);
    if (span === null) throw new Error("no span");
    const element = raw.subarray(span.start, span.end);
    // A compact body: element 0 starts right after the `[`.
    expect(span.start).toBe(1);
    expect(JSON.parse(element.toString("utf8"))).toEqual((JSON.parse(raw.toString("utf8")) as unknown[])[0]);
    const header = request.headers.find(([name]) => name.toLowerCase() === "x-signature")?.[1];
    const secret = fixture.settings.sharedSecret;
    if (request.signature?.covers === "first element") {
      expect(element.toString("utf8")).toBe(request.signature.firstElementText);
      expect(header).toBe(sign(secret ?? "", element));
      expect(header).not.toBe(sign(secret ?? "", raw));
    } else if (secret !== undefined) {
      // Signed batches aside, the only other kind: a null first element, sent without a signature.
      expect(element.toString("utf8")).toBe("null");
      expect(header).toBeUndefined();
    }
  });

  it("finds no element in the single requests' bodies (objects or empty)", () => {
    const singles = fixtures.filter((f) => !f.entry.includes("performBatch") && f.requests.length > 0);
    expect(singles.length).toBeGreaterThan(20);
    for (const fixture of singles) {
      const raw = Buffer.from(fixture.requests[0]?.body.base64 ?? "", "base64");
      expect(isJsonArrayBody(raw)).toBe(false);
      expect(firstElementBytes(raw)).toBeNull();
    }
  });
});

describe("firstElementBytes", () => {
  it("returns the exact bytes, whatever the spacing", () => {
    expect(first(`[{"a":1},2]`)).toBe(`{"a":1}`);
    expect(firstElementBytes(bytes(`[{"a":1},2]`))).toEqual({ start: 1, end: 8 });
    expect(first(` \t\r\n[ \n {  "a" :\t[ 1 , 2 ] } \r\n, 3 ] \n`)).toBe(`{  "a" :\t[ 1 , 2 ] }`);
    expect(first(`[1]`)).toBe("1");
    expect(first(`[ "x" ]`)).toBe(`"x"`);
    expect(first(`[[],{}]`)).toBe("[]");
    expect(first(`[{}]`)).toBe("{}");
  });

  it("gives the span of a null element 0 too (the caller decides)", () => {
    expect(first(`[null,{"a":1}]`)).toBe("null");
    expect(first(`[ null ]`)).toBe("null");
    expect(first(`[true,false]`)).toBe("true");
    expect(first(`[false]`)).toBe("false");
  });

  it("is not fooled by brackets, commas and escaped quotes inside strings", () => {
    expect(first(`["]",1]`)).toBe(`"]"`);
    expect(first(`[{"k\\"]":"],[{\\"\\\\"},{"b":"}"}]`)).toBe(`{"k\\"]":"],[{\\"\\\\"}`);
    expect(first(`["\\\\",1]`)).toBe(`"\\\\"`);
    expect(first(`["a\\/b\\b\\f\\n\\r\\t\\u00e9\\uD83D\\ude80"]`)).toBe(`"a\\/b\\b\\f\\n\\r\\t\\u00e9\\uD83D\\ude80"`);
  });

  it("keeps raw UTF-8 as it is", () => {
    const text = `[{"note":"café ✓ 東京 🚀"},{"x":"é"}]`;
    expect(first(text)).toBe(`{"note":"café ✓ 東京 🚀"}`);
    const span = firstElementBytes(bytes(text));
    expect(span?.end).toBe(1 + Buffer.byteLength(`{"note":"café ✓ 東京 🚀"}`));
  });

  it("accepts numbers exactly as JSON writes them", () => {
    for (const n of ["0", "-0", "12", "-12.5", "1e5", "1E+5", "2.5e-3", "0.0"]) expect(first(`[${n},1]`)).toBe(n);
    for (const n of ["01", "-", "1.", ".5", "1e", "+1", "0x1", "1e+", "--1", "NaN", "Infinity"]) expect(first(`[${n},1]`)).toBeNull();
  });

  it("walks 100,000 levels of nesting without recursion", () => {
    const depth = 100_000;
    const arrays = `[${"[".repeat(depth)}${"]".repeat(depth)},1]`;
    expect(firstElementBytes(bytes(arrays))).toEqual({ start: 1, end: 1 + 2 * depth });
    const objects = `[${`{"a":`.repeat(depth)}1${"}".repeat(depth)}]`;
    expect(firstElementBytes(bytes(objects))).toEqual({ start: 1, end: objects.length - 1 });
    // Unbalanced at the very bottom: refused, not thrown.
    expect(firstElementBytes(bytes(`[${"[".repeat(depth)}${"]".repeat(depth - 1)}}]`))).toBeNull();
  });

  it.each([
    ["empty body", ""],
    ["whitespace only", " \n "],
    ["an empty array", "[]"],
    ["an empty array with spaces", "[ \n ]"],
    ["an object", `{"a":[1]}`],
    ["a string", `"[1]"`],
    ["a number", "1"],
    ["a BOM first", "\uFEFF[1]"],
    ["truncated", `[{"a":1}`],
    ["truncated in a string", `[{"a":"1`],
    ["truncated after a comma", `[1,`],
    ["truncated after element 0", `[{"a":1},{"b"`],
    ["a trailing comma", `[1,]`],
    ["a trailing comma in an object", `[{"a":1,}]`],
    ["an object key without quotes", `[{a:1}]`],
    ["single quotes", `['a']`],
    ["a missing colon", `[{"a" 1}]`],
    ["a missing comma", `[1 2]`],
    ["a mismatched bracket", `[{"a":1]]`],
    ["an extra bracket", `[1]]`],
    ["two arrays", `[1] [2]`],
    ["garbage after", `[1] x`],
    ["a bare word", `[nul]`],
    ["a longer word", `[nullx]`],
    ["an invalid escape", `["\\x"]`],
    ["a short unicode escape", `["\\u12"]`],
    ["a raw newline in a string", `["a\nb"]`],
    ["a raw tab in a string", `["a\tb"]`],
    ["a backslash at the end", `["\\`],
    ["a comma first", `[,1]`],
    ["a lone colon", `[:]`],
  ])("null for %s, never a throw", (_name, text) => {
    expect(firstElementBytes(bytes(text))).toBeNull();
  });

  it("null for every truncation of a valid body", () => {
    const body = ` [ {"a" : "x\\"]" , "b":[1,-2.5e3,true,null,{}]} , "tail" ] `;
    expect(first(body)).not.toBeNull();
    for (let cut = 0; cut < body.trimEnd().length; cut++) expect(firstElementBytes(bytes(body.slice(0, cut)))).toBeNull();
  });

  it("agrees with JSON.parse on valid and broken bodies (seeded fuzz)", () => {
    const random = seeded(24);
    let arrays = 0;
    for (let round = 0; round < 3000; round++) {
      let text = `[${spaced(random)}${Array.from({ length: Math.floor(random() * 4) }, () => generate(random, 0)).join(`${spaced(random)},${spaced(random)}`)}${spaced(random)}]`;
      if (round % 2 === 1) text = mutate(text, random);
      const raw = bytes(text);
      let parsed: unknown;
      let valid = true;
      try {
        // Parsed from the bytes, as a receiver does (a cut surrogate pair becomes U+FFFD in both).
        parsed = JSON.parse(raw.toString("utf8"));
      } catch {
        valid = false;
      }
      const span = firstElementBytes(raw);
      const expected = valid && Array.isArray(parsed) && parsed.length > 0;
      if ((span !== null) !== expected) throw new Error(`disagrees with JSON.parse on ${JSON.stringify(text)}`);
      if (span !== null) {
        arrays++;
        expect(JSON.parse(raw.subarray(span.start, span.end).toString("utf8"))).toEqual((parsed as unknown[])[0]);
      }
    }
    expect(arrays).toBeGreaterThan(1000);
  });

  it("scans a 4,000-event batch of 2.4 MB in linear time", () => {
    const element = JSON.stringify({ type: "track", event: 'E "]" ✓', properties: { list: [1, 2, { x: "y".repeat(500) }] } });
    const body = bytes(`[${Array.from({ length: 4000 }, () => element).join(",")}]`);
    let span: ReturnType<typeof firstElementBytes> | undefined;
    const elapsed = cpuMs(() => {
      span = firstElementBytes(body);
    });
    expect(span).toEqual({ start: 1, end: 1 + Buffer.byteLength(element) });
    expect(elapsed).toBeLessThan(500);
  });
});

describe("isJsonArrayBody", () => {
  it("looks at the first byte that is not whitespace, nothing more", () => {
    expect(isJsonArrayBody(bytes("[1]"))).toBe(true);
    expect(isJsonArrayBody(bytes(" \r\n\t[oops"))).toBe(true);
    expect(isJsonArrayBody(bytes(`{"a":[1]}`))).toBe(false);
    expect(isJsonArrayBody(bytes(""))).toBe(false);
    expect(isJsonArrayBody(bytes("   "))).toBe(false);
    expect(isJsonArrayBody(bytes("\uFEFF[1]"))).toBe(false);
    expect(isJsonArrayBody(bytes("x["))).toBe(false);
  });
});

// A small seeded generator (mulberry32), so a failure can be replayed.
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function spaced(random: () => number): string {
  return random() < 0.6 ? "" : pick(random, [" ", "\n", "\t", "\r\n", "  "]);
}

const STRINGS = ["", "a", "]", "[", "}", "{", ",", ":", '\\"', "\\\\", "\\n", "\\u00e9", "é", "東京", "🚀", '\\"]\\"', "\\/"];
const SCALARS = ["0", "-1", "2.5", "-0.5e10", "1E-2", "true", "false", "null"];

function generate(random: () => number, depth: number): string {
  const roll = random();
  const w = () => spaced(random);
  if (depth > 4 || roll < 0.35) return pick(random, SCALARS);
  if (roll < 0.6) return `"${pick(random, STRINGS)}${pick(random, STRINGS)}"`;
  const count = Math.floor(random() * 4);
  if (roll < 0.8) return `[${w()}${Array.from({ length: count }, () => generate(random, depth + 1)).join(`${w()},${w()}`)}${w()}]`;
  const members = Array.from({ length: count }, () => `"${pick(random, STRINGS)}"${w()}:${w()}${generate(random, depth + 1)}`);
  return `{${w()}${members.join(`${w()},${w()}`)}${w()}}`;
}

const NOISE = ["[", "]", "{", "}", '"', ",", ":", "\\", " ", "1", "-", ".", "e", "n", "t", "u", "0", "\n", "x"];

function mutate(text: string, random: () => number): string {
  const at = Math.floor(random() * (text.length + 1));
  switch (Math.floor(random() * 4)) {
    case 0:
      return text.slice(0, at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    case 2:
      return text.slice(0, at) + pick(random, NOISE) + text.slice(at);
    default:
      return text.slice(0, at) + pick(random, NOISE) + text.slice(at + 1);
  }
}
