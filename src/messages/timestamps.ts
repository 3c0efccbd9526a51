/**
 * Timestamps. Built messages carry the canonical form (ISO 8601 UTC with
 * milliseconds); accepted messages may carry any ISO 8601 date-time, as real
 * clients send (`2024-01-01T00:00:00Z`, `2009-11-10T23:00:00+0000`, `+02:00`).
 * Pure arithmetic, no Date objects on the checking path: listen runs it per request.
 */

/** `2012-12-02T00:30:08.276Z`: ISO 8601, UTC, milliseconds (docs/messages.md#built-messages). */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Any ISO 8601 date, optionally with a time, fractional seconds and a `Z` or numeric offset. */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?\s*([Zz]|[+-]\d{2}:?\d{2})?)?$/;

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The canonical form of a built message, naming a day that exists. */
export function isTimestamp(value: unknown): value is string {
  return typeof value === "string" && value.length === 24 && TIMESTAMP_PATTERN.test(value) && validFields(value);
}

/** Any ISO 8601 date-time a real client sends (docs/messages.md#accepted-messages). */
export function isIsoDateTime(value: unknown): value is string {
  if (typeof value !== "string") return false;
  // Most traffic is already canonical: checked without the capturing pattern.
  if (isTimestamp(value)) return true;
  return epochOf(value) !== undefined;
}

/** Any ISO 8601 date-time → `2012-12-02T00:30:08.276Z`; undefined when it is not one. */
export function normalizeTimestamp(value: unknown): string | undefined {
  if (isTimestamp(value)) return value;
  if (typeof value !== "string") return undefined;
  const epoch = epochOf(value);
  return epoch === undefined ? undefined : new Date(epoch).toISOString();
}

/** Milliseconds since the epoch of an ISO 8601 date-time; without an offset it is read as UTC, not this machine's zone. */
function epochOf(text: string): number | undefined {
  const match = ISO_DATE_TIME.exec(text.trim());
  if (!match) return undefined;
  const [, y, mo, d, h = "00", mi = "00", s = "00", fraction = "", offset = "Z"] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (!validDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (offset !== "Z" && offset !== "z") {
    const digits = offset.replace(":", "");
    const oh = Number(digits.slice(1, 3));
    const om = Number(digits.slice(3, 5));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (offset.startsWith("-") ? -1 : 1) * (oh * 60 + om);
  }
  const ms = Number(fraction.slice(0, 3).padEnd(3, "0"));
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
  // Date.UTC reads years 0–99 as 1900–1999.
  if (year < 100) date.setUTCFullYear(year);
  return date.getTime() - offsetMinutes * 60_000;
}

function validFields(value: string): boolean {
  return (
    validDate(digits(value, 0, 4), digits(value, 5, 2), digits(value, 8, 2)) &&
    digits(value, 11, 2) < 24 &&
    digits(value, 14, 2) < 60 &&
    digits(value, 17, 2) < 60
  );
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && !leap ? 28 : (DAYS[month - 1] ?? 0));
}

function digits(text: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}
