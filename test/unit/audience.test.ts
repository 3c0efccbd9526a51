import { describe, expect, it } from "vitest";
import { applyChanges, membershipChanges, parseMembers, snakeName } from "../../src/audience/audience.js";

describe("snakeName", () => {
  it.each([
    ["VIP-Users 2024", "vip_users_2024"],
    ["  Big   Spenders!! ", "big_spenders"],
    ["already_snake", "already_snake"],
    ["--Ünïcode Fans--", "n_code_fans"],
    ["a__b", "a_b"],
    ["!!!", ""],
  ])("%j → %j", (name, expected) => {
    expect(snakeName(name)).toBe(expected);
  });
});

describe("membershipChanges", () => {
  it("first sync: every member enters, in file order, duplicates once", () => {
    expect(membershipChanges(["b", "a", "b"], [])).toEqual([
      { userId: "b", member: true },
      { userId: "a", member: true },
    ]);
  });

  it("later syncs: only entries (true) and exits (false)", () => {
    expect(membershipChanges(["a", "c", "d"], ["a", "b", "c"])).toEqual([
      { userId: "d", member: true },
      { userId: "b", member: false },
    ]);
    expect(membershipChanges(["a"], ["a"])).toEqual([]);
  });

  it("applyChanges records what was delivered", () => {
    expect(
      applyChanges(
        ["a", "b"],
        [
          { userId: "b", member: false },
          { userId: "c", member: true },
        ],
      ),
    ).toEqual(["a", "c"]);
  });
});

describe("parseMembers", () => {
  it("reads one ID per line, trimming and skipping blanks and CRs", () => {
    expect(parseMembers("\uFEFFu1\r\n  u2 \n\nu3\nu1\n")).toEqual({ ok: true, members: ["u1", "u2", "u3"] });
  });

  it("reads a JSON array (numbers become strings)", () => {
    expect(parseMembers('["u1", 42, "u2"]')).toEqual({ ok: true, members: ["u1", "42", "u2"] });
  });

  it("names the bad element of a JSON array", () => {
    const result = parseMembers('["u1", {"id": 2}]');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain("element [1]");
    expect(parseMembers("[1,").ok).toBe(false);
  });
});
