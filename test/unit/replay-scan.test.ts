import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildExamples } from "../../src/messages/examples.js";
import { checkLine, parseEntry } from "../../src/replay/envelope.js";
import { LineBits, LinePlan } from "../../src/replay/line-bits.js";
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

  it.each(lines.map((line) => [line.slice(0, 60), line]))(
    "with `all`, also parseEntry's messageId, event and time (results lines, --speed): %s…",
    (_name, line) => {
      const check = checkLine(line, 1);
      if (!check.ok || !check.canonical) return;
      const parsed = parseEntry(line, 1, false, { time: true });
      const scanned = scanMessage(line, "all");
      if (!parsed.ok || scanned === undefined) throw new Error("a canonical line parses and scans");
      expect(scanned.type).toBe(parsed.entry.type);
      expect(scanned.orderKey).toBe(parsed.entry.orderKey);
      expect(scanned.messageId).toBe(parsed.entry.messageId);
      expect(scanned.type === "track" ? scanned.event : undefined).toBe(parsed.entry.event);
      const time = scanned.timestamp === undefined ? Number.NaN : Date.parse(scanned.timestamp);
      expect(Number.isNaN(time) ? undefined : time).toBe(parsed.entry.time);
    },
  );

  /** Lines whose messageId is missing, nested, late, not a string, or only looks like one inside a string. */
  const withIds = [
    ...lines,
    ...[
      { version: 1, type: "track", userId: "u", event: "E", properties: { messageId: "nested" }, timestamp: track.timestamp },
      { version: 1, type: "track", userId: "u", event: "E", properties: { messageId: "nested" }, messageId: "late", timestamp: track.timestamp },
      { messageId: "first", version: 1, type: "identify", userId: "u", traits: {}, timestamp: track.timestamp },
      { version: 1, type: "identify", anonymousId: "a", messageId: 'q"\\é', traits: {}, timestamp: track.timestamp },
      { version: 1, type: "identify", userId: "u", messageId: null, traits: {}, timestamp: track.timestamp },
      { version: 1, type: "identify", userId: "u", messageId: "", traits: {}, timestamp: track.timestamp },
      { version: 1, type: "identify", userId: "u", traits: { note: '"messageId":"in a string"' }, timestamp: track.timestamp },
    ].map((m) => JSON.stringify(m)),
  ];

  it.each(withIds.map((line) => [line.slice(0, 60), line]))("the messageId scan gives parseEntry's type, order key, messageId: %s…", (_name, line) => {
    const check = checkLine(line, 1);
    if (!check.ok || !check.canonical) return;
    const parsed = parseEntry(line, 1, false, { time: false });
    if (!parsed.ok) throw new Error("a canonical line parses");
    expect(scanMessage(line, "messageId")).toEqual({ type: parsed.entry.type, orderKey: parsed.entry.orderKey, messageId: parsed.entry.messageId });
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

describe("LineBits (the validation pass's plan for each line)", () => {
  it("holds exactly the plan set for each line, growing as needed; a line never set is skipped", () => {
    const bits = new LineBits();
    const plans = [LinePlan.parse, LinePlan.canonical, LinePlan.asRead];
    const lines = [1, 2, 3, 4, 7, 8, 9, 1023, 4095, 4096, 8191, 8192, 1_000_003];
    for (const [i, line] of lines.entries()) bits.set(line, plans[i % 3] as LinePlan);
    for (const [i, line] of lines.entries()) expect(bits.get(line)).toBe(plans[i % 3]);
    for (const line of [0, 5, 6, 10, 8193, 1_000_002, 1_000_004, 5_000_000]) expect(bits.get(line)).toBe(LinePlan.skip);
    // Setting a line again replaces its plan and leaves its neighbours alone.
    bits.set(2, LinePlan.skip);
    bits.set(3, LinePlan.parse);
    expect([1, 2, 3, 4].map((line) => bits.get(line))).toEqual([LinePlan.parse, LinePlan.skip, LinePlan.parse, LinePlan.parse]);
  });
});
