import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildExamples } from "../../src/messages/examples.js";
import { checkLine, parseEntry } from "../../src/replay/envelope.js";
import { LineBits } from "../../src/replay/line-bits.js";
import { scanMessage } from "../../src/replay/scan.js";

const track = { version: 1, type: "track", userId: "u1", event: "Signed Up", properties: { plan: "pro" }, timestamp: "2024-01-01T00:00:00.000Z" };

/** Messages whose top-level keys are placed to trip a scanner: nested look-alike keys, escapes, null ids. */
const TRICKY: Record<string, unknown>[] = [
  {
    properties: { userId: "nested", type: "page", s: 'a "quoted" } ] { [ \\ value' },
    version: 1,
    type: "track",
    event: "E",
    userId: "outer",
    timestamp: track.timestamp,
  },
  { version: 1, type: "identify", userId: null, anonymousId: "anon_1", traits: { list: [{ userId: "x" }, "}", "]"] }, timestamp: track.timestamp },
  { version: 1, type: "track", userId: 'ü\u2028"\\/é😀\n', event: "E", properties: {}, timestamp: track.timestamp },
  { version: 1, type: "alias", "Previous ID": "a", "User ID": "b", timestamp: track.timestamp },
  { version: 1, type: "alias", previousId: "a", userId: "b", timestamp: track.timestamp },
  { version: 1, type: "group", anonymousId: "anon", groupId: "g", traits: { n: -1.5e-7, t: true, f: false, z: null }, timestamp: track.timestamp },
  { version: 2, type: "screen", userId: "u", name: "Home", properties: {}, timestamp: track.timestamp, extra: [[[]], {}] },
];

function realTrafficLines(): string[] {
  const dir = new URL("../../fixtures/real-traffic/", import.meta.url);
  const lines: string[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".json") && !name.endsWith(".ndjson")) continue;
    const text = readFileSync(new URL(name, dir), "utf8");
    const values: unknown[] = name.endsWith(".ndjson")
      ? text
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [JSON.parse(text)];
    for (const value of values) lines.push(JSON.stringify(value));
  }
  return lines;
}

describe("scanMessage (the sending pass on canonical lines)", () => {
  const lines = [
    ...buildExamples(undefined, { seed: 7, now: new Date("2024-01-01T00:00:00.000Z") }).map((m) => JSON.stringify(m)),
    ...buildExamples(undefined, { seed: 8, aliasKeys: "camel" }).map((m) => JSON.stringify(m)),
    ...TRICKY.map((m) => JSON.stringify(m)),
    ...realTrafficLines(),
  ];

  it.each(lines.map((line) => [line.slice(0, 60), line]))("gives parseEntry's type and order key: %s…", (_name, line) => {
    const check = checkLine(line, 1);
    if (!check.ok || !check.canonical) return; // only lines the validation pass marks canonical are scanned
    const parsed = parseEntry(line, 1, false, { time: false });
    expect(parsed.ok && parsed.entry.body).toBe(line);
    if (!parsed.ok) return;
    expect(scanMessage(line)).toEqual({ type: parsed.entry.type, orderKey: parsed.entry.orderKey });
  });

  it("covers canonical bare messages of every type (so the cases above cannot all skip)", () => {
    const canonical = lines.filter((line) => {
      const check = checkLine(line, 1);
      return check.ok && check.canonical;
    });
    expect(new Set(canonical.map((line) => (JSON.parse(line) as { type: string }).type))).toEqual(
      new Set(["page", "screen", "identify", "track", "alias", "group", "delete"]),
    );
  });

  it("gives up on text that is not a top-level object with a type (the caller parses it)", () => {
    for (const text of ["", "[]", "{}", '{"userId":"u"}', '{"type":"track"', '{"type":"track",}', '{"type":"track"}x', '{"a":}', '"type"']) {
      expect(scanMessage(text)).toBeUndefined();
    }
  });
});

describe("checkLine's canonical mark", () => {
  it("marks a bare message written by JSON.stringify, not other spellings, envelopes or --raw lines", () => {
    const line = JSON.stringify(track);
    expect(checkLine(line, 1)).toMatchObject({ ok: true, canonical: true });
    expect(checkLine(JSON.stringify(track, null, 1).replace(/\n/g, ""), 1)).toMatchObject({ ok: true, canonical: false });
    expect(checkLine(line.replace('"Signed Up"', '"Signed\\u0020Up"'), 1)).toMatchObject({ ok: true, canonical: false });
    expect(checkLine(line.replace('"version":1', '"version":1.0'), 1)).toMatchObject({ ok: true, canonical: false });
    expect(checkLine(line.replace('{"version":1,', '{"version":1,"version":1,'), 1)).toMatchObject({ ok: true, canonical: false });
    expect(checkLine(JSON.stringify({ receivedAt: "2024-02-02T00:00:00.000Z", body: track }), 1)).toMatchObject({ ok: true, canonical: false });
    expect(checkLine(line, 1, true)).toMatchObject({ ok: true, canonical: false });
  });
});

describe("LineBits", () => {
  it("holds exactly the lines added, growing as needed", () => {
    const bits = new LineBits();
    const lines = [1, 7, 8, 9, 1023, 8191, 8192, 1_000_003];
    for (const line of lines) bits.add(line);
    for (const line of lines) expect(bits.has(line)).toBe(true);
    for (const line of [0, 2, 6, 10, 8193, 1_000_002, 1_000_004, 5_000_000]) expect(bits.has(line)).toBe(false);
  });
});
