/**
 * Audience membership (docs/messages.md#audience-sync), pure: the trait name and what changed
 * between the delivered state and the current members.
 */

import { parseUntrustedJson } from "../json/parse.js";

/** `VIP-Users 2024` → `vip_users_2024`: lower-case, each run of other characters one `_`, trimmed. */
export function snakeName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

/** One identify to send: `member` true when the user entered, false when they left. */
export interface MembershipChange {
  userId: string;
  member: boolean;
}

/**
 * Changes from `delivered` (the members whose `true` was delivered and not yet
 * revoked) to `current`: entries first, in the members file's order, then exits
 * in the state's order. On a first sync `delivered` is empty, so every member enters.
 */
export function membershipChanges(current: readonly string[], delivered: readonly string[]): MembershipChange[] {
  const now = new Set(current);
  const before = new Set(delivered);
  const changes: MembershipChange[] = [];
  const queued = new Set<string>();
  for (const userId of current) {
    if (!before.has(userId) && !queued.has(userId)) {
      queued.add(userId);
      changes.push({ userId, member: true });
    }
  }
  for (const userId of delivered) {
    if (!now.has(userId) && !queued.has(userId)) {
      queued.add(userId);
      changes.push({ userId, member: false });
    }
  }
  return changes;
}

/** Applies delivered changes to the state's member list (order kept, entries appended). */
export function applyChanges(delivered: readonly string[], changes: readonly MembershipChange[]): string[] {
  const members = new Set(delivered);
  for (const change of changes) {
    if (change.member) members.add(change.userId);
    else members.delete(change.userId);
  }
  return [...members];
}

/**
 * Parses a members file: a JSON array of IDs, or one ID per line (blank lines
 * and surrounding spaces ignored). Returns the IDs or the reason and line.
 */
export function parseMembers(text: string): { ok: true; members: string[] } | { ok: false; error: string } {
  const body = text.replace(/^\uFEFF/, "");
  if (body.trimStart().startsWith("[")) {
    let value: unknown;
    try {
      value = parseUntrustedJson(body);
    } catch (error) {
      return { ok: false, error: `not a valid JSON array: ${(error as Error).message}` };
    }
    if (!Array.isArray(value)) return { ok: false, error: "expected a JSON array of user IDs" };
    const members: string[] = [];
    for (const [index, item] of value.entries()) {
      if (typeof item === "number" && Number.isFinite(item)) members.push(String(item));
      else if (typeof item === "string" && item.trim() !== "") members.push(item.trim());
      else return { ok: false, error: `element [${index}] is not a user ID (a non-empty string): ${JSON.stringify(item)}` };
    }
    return { ok: true, members: unique(members) };
  }
  const members = body
    .split("\n")
    .map((line) => line.replace(/\r$/, "").trim())
    .filter((line) => line !== "");
  return { ok: true, members: unique(members) };
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}
