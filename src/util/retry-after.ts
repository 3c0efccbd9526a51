// Pure: shared by the delivery engine and the client library, so the client's
// import graph stays free of the delivery modules.

/**
 * Parses a Retry-After value: delay-seconds or an HTTP-date. Returns the wait
 * in ms from `nowMs`, or undefined when the value is not valid. A date in the
 * past means "now" (0).
 */
export function parseRetryAfter(value: string | readonly string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value) as string | undefined;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const seconds = Number(trimmed);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  // HTTP-date (IMF-fixdate and the obsolete forms Date.parse understands); must name a weekday or month to
  // avoid taking odd numbers as dates.
  if (!/[A-Za-z]{3}/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
