import { UsageError } from "../errors.js";
import { inShard, type Shard } from "./shard.js";

/**
 * Which input lines a replay sends: `--line N|A-B`, `--message-id`, `--user-id`
 * (each repeatable: OR within a flag), `--type`, `--from-line` and `--shard`,
 * all ANDed across flags. Pure.
 */
export interface LineRange {
  from: number;
  to: number;
}

export interface SelectionOptions {
  lines?: readonly LineRange[] | undefined;
  messageIds?: readonly string[] | undefined;
  /** Matched against the order key (userIdOf: userId, else alias "User ID", else anonymousId). */
  userIds?: readonly string[] | undefined;
  types?: readonly string[] | undefined;
  fromLine?: number | undefined;
  shard?: Shard | undefined;
}

/** What a selector needs to know about one valid input line. */
export interface Candidate {
  line: number;
  type: string;
  userId: string | undefined;
  messageId: string | undefined;
}

export interface Selection {
  /** Whether the line number alone rules it out (checked before a line is parsed). */
  lineMayMatch(line: number): boolean;
  matches(candidate: Candidate): boolean;
  /** No line after this can match (the reader may stop), or undefined. */
  lastLine: number | undefined;
  /** No line before this can match (--from-line; 1 by default): where a run starts, for its resume line. */
  fromLine: number;
}

/** `N` or `A-B` (inclusive), from 1. */
export function parseLineRange(text: string, field = "lines"): LineRange {
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(text);
  const from = Number(match?.[1]);
  const to = match?.[2] !== undefined ? Number(match[2]) : from;
  if (!match || !Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 1) {
    throw new UsageError(`invalid value "${text}": expected a line number N or a range A-B (from 1)`, { field });
  }
  if (to < from) throw new UsageError(`invalid value "${text}": the range ends before it starts`, { field });
  return { from, to };
}

/** Repeatable id flags: an empty value would silently match nothing, so it is refused. */
export function parseIds(values: readonly string[], field: string): string[] {
  for (const value of values) {
    if (value === "") throw new UsageError('invalid value "": expected a non-empty id', { field });
  }
  return [...values];
}

export function createSelection(options: SelectionOptions): Selection {
  const ranges = mergeRanges(options.lines ?? []);
  const fromLine = options.fromLine ?? 1;
  const messageIds = setOf(options.messageIds);
  const userIds = setOf(options.userIds);
  const types = setOf(options.types);
  const shard = options.shard;
  const lineMayMatch = (line: number): boolean => line >= fromLine && (ranges.length === 0 || inRanges(ranges, line));
  return {
    lineMayMatch,
    matches(candidate) {
      if (!lineMayMatch(candidate.line)) return false;
      if (types && !types.has(candidate.type)) return false;
      if (messageIds && (candidate.messageId === undefined || !messageIds.has(candidate.messageId))) return false;
      if (userIds && (candidate.userId === undefined || !userIds.has(candidate.userId))) return false;
      return shard === undefined || inShard(shard, candidate.userId, candidate.line);
    },
    lastLine: ranges.length > 0 ? (ranges[ranges.length - 1] as LineRange).to : undefined,
    fromLine,
  };
}

function setOf(values: readonly string[] | undefined): Set<string> | undefined {
  return values && values.length > 0 ? new Set(values) : undefined;
}

/** Sorted, overlapping and adjacent ranges joined. */
function mergeRanges(ranges: readonly LineRange[]): LineRange[] {
  const sorted = [...ranges].sort((a, b) => a.from - b.from);
  const merged: LineRange[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last && range.from <= last.to + 1) last.to = Math.max(last.to, range.to);
    else merged.push({ ...range });
  }
  return merged;
}

function inRanges(ranges: readonly LineRange[], line: number): boolean {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const range = ranges[mid] as LineRange;
    if (line < range.from) high = mid - 1;
    else if (line > range.to) low = mid + 1;
    else return true;
  }
  return false;
}

/** The selecting flags in use, to name them when nothing matches: `--line, --type`. */
export function selectionFlags(options: SelectionOptions): string {
  const flags: string[] = [];
  if (options.lines?.length) flags.push("--line");
  if (options.messageIds?.length) flags.push("--message-id");
  if (options.userIds?.length) flags.push("--user-id");
  if (options.types?.length) flags.push("--type");
  if (options.fromLine !== undefined) flags.push("--from-line");
  if (options.shard !== undefined) flags.push("--shard");
  return flags.join(", ");
}
