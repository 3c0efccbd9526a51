import { UsageError } from "../../errors.js";

/**
 * `sign`'s and `verify`'s URL flags: a full http:// or https:// URL (a host at least), as a sender's
 * request has; else a UsageError naming the flag and saying what was `expected`.
 */
export function checkFullUrl(url: string, flag: string, expected: string): void {
  if (!/^https?:\/\/[^/?#\s]+/i.test(url)) throw new UsageError(`expected ${expected}, got ${JSON.stringify(url)}`, { flag });
}
