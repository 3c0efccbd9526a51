/**
 * The number rules of every numeric flag: plain decimal only. Number()
 * alone would take `0x10`, `1e3`, ` 5` and `0b1`; these return undefined
 * for anything but digits (with a sign, and a fraction where allowed). Pure.
 */
const WHOLE = /^-?\d+$/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/** A whole number written in decimal digits, within the safe-integer range; else undefined. */
export function parseWholeNumber(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** A number written as decimal digits with an optional fraction (`0.5`, `12`); else undefined. */
export function parseDecimalNumber(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** The longest delay a Node timer holds (2^31 − 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
