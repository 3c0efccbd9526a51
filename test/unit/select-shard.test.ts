import { describe, expect, it } from "vitest";
import { flagOfField } from "../../src/cli/shell/field-flags.js";
import { UsageError, type WebhookCliError } from "../../src/errors.js";
import { userIdOf } from "../../src/messages/check.js";
import { parseExpectStatus, unexpectedStatuses } from "../../src/regress/expect-status.js";
import { messageFacts } from "../../src/regress/results.js";
import { createSelection, parseIds, parseLineRange, selectionFlags, type Candidate } from "../../src/replay/select.js";
import { fnv1a32, inShard, parseShard, shardOf } from "../../src/replay/shard.js";

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    // Library errors name the option field; the CLI shows its flag.
    return (error as WebhookCliError).describe(flagOfField);
  }
  throw new Error("expected a UsageError");
}

function candidate(line: number, type: string, userId?: string, messageId?: string): Candidate {
  return { line, type, userId, messageId };
}

describe("--expect-status", () => {
  it("accepts classes and exact statuses", () => {
    const twoXx = parseExpectStatus("2xx");
    expect([200, 202, 299, 301, 404, 500].map(twoXx.test)).toEqual([true, true, true, false, false, false]);
    const list = parseExpectStatus("200, 202");
    expect([200, 201, 202].map(list.test)).toEqual([true, false, true]);
    const mixed = parseExpectStatus("2XX,404");
    expect([204, 404, 410].map(mixed.test)).toEqual([true, true, false]);
    expect(mixed.text).toBe("2XX,404");
  });

  it("names the flag and the bad value", () => {
    expect(usageError(() => parseExpectStatus("2xx,abc"))).toBe(
      '--expect-status: invalid status "abc" in "2xx,abc": expected statuses 100–599 or classes like 2xx, separated by commas',
    );
    for (const bad of ["", "200,", "6xx", "99", "600", "20x", "2000"])
      expect(usageError(() => parseExpectStatus(bad))).toMatch(/^--expect-status: invalid status/);
  });

  it("lists the answers outside the list, not the URLs without an answer", () => {
    const expected = parseExpectStatus("202");
    expect(unexpectedStatuses([{ url: "http://a/", status: 200 }], expected)).toEqual(["status 200 not in 202"]);
    expect(
      unexpectedStatuses(
        [
          { url: "http://a/", status: 202 },
          { url: "http://b/", status: 200 },
          { url: "http://c/", status: null },
        ],
        expected,
      ),
    ).toEqual(["http://b/: status 200 not in 202"]);
  });
});

describe("selectors", () => {
  it("parses --line N and A-B, naming the flag and value when wrong", () => {
    expect(parseLineRange("7")).toEqual({ from: 7, to: 7 });
    expect(parseLineRange("3-9")).toEqual({ from: 3, to: 9 });
    expect(usageError(() => parseLineRange("9-3"))).toBe('--line: invalid value "9-3": the range ends before it starts');
    for (const bad of ["0", "-3", "3-", "a", "1-2-3", "", "1.5"]) expect(usageError(() => parseLineRange(bad))).toMatch(/^--line: invalid value/);
    expect(usageError(() => parseIds(["m1", ""], "messageIds"))).toMatch(/^--message-id: invalid value ""/);
  });

  it("ORs values within a flag and ANDs across flags", () => {
    const lines = [
      candidate(1, "track", "u1", "m1"),
      candidate(2, "identify", "u1", "m2"),
      candidate(3, "track", "u2", "m3"),
      candidate(5, "track", "u1"),
      candidate(8, "page", "u3", "m8"),
      candidate(9, "track", undefined, "m9"),
    ];
    const pick = (options: Parameters<typeof createSelection>[0]) => lines.filter((c) => createSelection(options).matches(c)).map((c) => c.line);
    expect(pick({})).toEqual([1, 2, 3, 5, 8, 9]);
    expect(pick({ lines: [parseLineRange("2-3"), parseLineRange("8")] })).toEqual([2, 3, 8]);
    expect(pick({ messageIds: ["m3", "m8", "nope"] })).toEqual([3, 8]);
    expect(pick({ userIds: ["u1"] })).toEqual([1, 2, 5]);
    expect(pick({ userIds: ["u1"], types: ["track"] })).toEqual([1, 5]);
    expect(pick({ userIds: ["u1", "u2"], types: ["track"], fromLine: 3 })).toEqual([3, 5]);
    expect(pick({ lines: [parseLineRange("1-8")], types: ["track", "page"], messageIds: ["m1", "m8", "m9"] })).toEqual([1, 8]);
    expect(pick({ lines: [parseLineRange("1-2")], fromLine: 2 })).toEqual([2]);
  });

  it("names the selecting flags in use", () => {
    expect(selectionFlags({ lines: [{ from: 1, to: 2 }], types: ["track"], shard: { index: 1, count: 2 } })).toBe("--line, --type, --shard");
    expect(selectionFlags({ lines: [], userIds: ["u"], messageIds: ["m"], fromLine: 3 })).toBe("--message-id, --user-id, --from-line");
  });

  it("rules lines out by number alone and knows the last line that can match", () => {
    const selection = createSelection({ lines: [parseLineRange("10-12"), parseLineRange("3"), parseLineRange("11-20")], fromLine: 4 });
    expect([3, 4, 9, 10, 15, 20, 21].map(selection.lineMayMatch)).toEqual([false, false, false, true, true, true, false]);
    expect(selection.lastLine).toBe(20);
    expect(createSelection({ types: ["track"] }).lastLine).toBeUndefined();
  });

  it("matches --user-id against the same user key as per-user order", () => {
    const alias = { type: "alias", "Previous ID": "a", "User ID": "b" };
    const anonymous = { type: "track", anonymousId: "anon-1", event: "E" };
    const selection = createSelection({ userIds: ["b", "anon-1"] });
    expect(selection.matches({ line: 1, ...messageFacts(alias, userIdOf(alias)) })).toBe(true);
    expect(selection.matches({ line: 2, ...messageFacts(anonymous, userIdOf(anonymous)) })).toBe(true);
  });
});

describe("--shard", () => {
  it("parses K/N and names the flag and value when wrong", () => {
    expect(parseShard("2/4")).toEqual({ index: 2, count: 4 });
    expect(parseShard("1/1")).toEqual({ index: 1, count: 1 });
    expect(usageError(() => parseShard("5/4"))).toBe('--shard: invalid value "5/4": K must be from 1 to N (4)');
    expect(usageError(() => parseShard("0/4"))).toMatch(/K must be from 1 to N/);
    expect(usageError(() => parseShard("1/0"))).toMatch(/N must be from 1/);
    for (const bad of ["1", "1/", "/4", "a/b", "1/4/2", "-1/4", "1.5/4"])
      expect(usageError(() => parseShard(bad))).toMatch(/^--shard: invalid value .*expected K\/N/);
  });

  it("hashes with FNV-1a 32-bit over UTF-8 (pinned: a change of algorithm fails here)", () => {
    // The published FNV-1a test vectors, then UTF-8 and user keys.
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    expect(fnv1a32("ü")).toBe(0x119dd44a);
    expect(fnv1a32("user-42")).toBe(0x026073ab);
    expect(shardOf("user-42", 1, 4)).toBe(4);
    expect(shardOf("a", 1, 4)).toBe(1);
    expect(shardOf("ü", 1, 4)).toBe(3);
  });

  it("puts messages without a user round-robin by line", () => {
    expect([1, 2, 3, 4, 5].map((line) => shardOf(undefined, line, 3))).toEqual([1, 2, 3, 1, 2]);
  });

  it("covers every line exactly once over N shards and keeps each user's lines in one shard", () => {
    // A deterministic pseudo-random log: users, anonymous ids, non-ASCII ids, lines without a user.
    let seed = 12345;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const users = Array.from({ length: 97 }, (_, i) => (i % 5 === 0 ? `anon-${i}-é` : `user-${i}`));
    const log = Array.from({ length: 3000 }, (_, i) => ({ line: i + 1, userId: next() % 10 === 0 ? undefined : users[next() % users.length] }));
    for (const count of [1, 2, 3, 7, 16]) {
      const owner = new Map<number, number>();
      const shardOfUser = new Map<string, number>();
      for (let k = 1; k <= count; k++) {
        const shard = parseShard(`${k}/${count}`);
        const selection = createSelection({ shard });
        for (const entry of log) {
          if (!selection.matches(candidate(entry.line, "track", entry.userId))) continue;
          expect(owner.has(entry.line)).toBe(false);
          owner.set(entry.line, k);
          if (entry.userId !== undefined) {
            expect(shardOfUser.get(entry.userId) ?? k).toBe(k);
            shardOfUser.set(entry.userId, k);
          }
        }
      }
      expect(owner.size).toBe(log.length);
      if (count > 1) expect(new Set(owner.values()).size).toBe(count);
    }
  });

  it("is what inShard answers", () => {
    expect(inShard({ index: 4, count: 4 }, "user-42", 1)).toBe(true);
    expect(inShard({ index: 3, count: 4 }, "user-42", 1)).toBe(false);
  });
});
