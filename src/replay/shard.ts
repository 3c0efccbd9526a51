import { UsageError } from "../errors.js";

/**
 * `--shard K/N`: N CI jobs replay disjoint parts of one log. A message goes to
 * the share its user hashes to (the per-user order key, userIdOf), so one
 * user's messages stay in one job, in order. Messages without a user have no
 * order to keep and go round-robin by line number ((line − 1) mod N), which
 * spreads them evenly and needs no hash.
 *
 * The hash is FNV-1a, 32-bit, over the key's UTF-8 bytes: fixed by its
 * definition, so a user lands in the same share on every run, machine and Node
 * version (never V8's string hash or Math.random). Tests pin known values.
 */
export interface Shard {
  /** K, from 1. */
  index: number;
  /** N. */
  count: number;
}

const MAX_SHARDS = 10_000;

export function parseShard(text: string, field = "shard"): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!match) throw new UsageError(`invalid value "${text}": expected K/N, e.g. 1/4 (share K of N)`, { field });
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || count > MAX_SHARDS) throw new UsageError(`invalid value "${text}": N must be from 1 to ${MAX_SHARDS}`, { field });
  if (index < 1 || index > count) throw new UsageError(`invalid value "${text}": K must be from 1 to N (${count})`, { field });
  return { index, count };
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a 32-bit of the UTF-8 bytes of `text` (lone surrogates encode as U+FFFD, as Buffer does). */
export function fnv1a32(text: string): number {
  const bytes = Buffer.from(text, "utf8");
  let hash = FNV_OFFSET;
  for (let i = 0; i < bytes.length; i++) {
    hash ^= bytes[i] as number;
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/** The share (1..count) of a message: its user's hash, else its line round-robin. */
export function shardOf(userId: string | undefined, line: number, count: number): number {
  return userId !== undefined ? (fnv1a32(userId) % count) + 1 : ((line - 1) % count) + 1;
}

export function inShard(shard: Shard, userId: string | undefined, line: number): boolean {
  return shardOf(userId, line, shard.count) === shard.index;
}
