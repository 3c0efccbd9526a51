import { UsageError, type ErrorSource } from "../errors.js";
import { MAX_TIMER_MS } from "./numbers.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PATTERN = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/** Parses `250ms`, `5s`, `1.5m`, `4h` into milliseconds; the error names the value and its source. */
export function parseDuration(text: string, source: ErrorSource = {}): number {
  const match = PATTERN.exec(text.trim());
  const unit = match?.[2];
  if (!match || unit === undefined) {
    throw new UsageError(`invalid duration "${text}": use a number with a unit, e.g. 250ms, 5s, 10m, 4h`, source);
  }
  const ms = Number(match[1]) * (UNITS[unit] ?? 1);
  if (!Number.isFinite(ms)) throw new UsageError(`invalid duration "${text}"`, source);
  if (Math.round(ms) > MAX_TIMER_MS) {
    throw new UsageError(`duration "${text}" is too long: at most ${MAX_TIMER_MS}ms (about 24.8 days)`, source);
  }
  return Math.round(ms);
}

/**
 * A duration given as a number of milliseconds (a JSON value, a library option), held to the rules
 * of a string one: finite, from 0, within a timer's range (a longer one would fire at once, with a
 * TimeoutOverflowWarning). A string goes through parseDuration; any other value is refused.
 */
export function durationOf(value: unknown, source: ErrorSource = {}): number {
  if (typeof value === "string") return parseDuration(value, source);
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new UsageError(`invalid duration ${describe(value)}: give milliseconds from 0 to ${MAX_TIMER_MS}, or a duration such as "2s"`, source);
  }
  if (Math.round(value) > MAX_TIMER_MS) throw new UsageError(`duration ${value} ms is too long: at most ${MAX_TIMER_MS}ms (about 24.8 days)`, source);
  return Math.round(value);
}

function describe(value: unknown): string {
  return typeof value === "number" ? String(value) : value === null ? "null" : `of type ${typeof value}`;
}

/** `1234` → `1.2s`, `85` → `85ms`: for human output. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)}m`;
  return `${(ms / 3_600_000).toFixed(1)}h`;
}
