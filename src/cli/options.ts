import { z } from "zod";
import { UsageError } from "../errors.js";
import { MESSAGE_TYPES, type MessageType } from "../messages/names.js";
import { parseDuration } from "../util/duration.js";
import { parseJson } from "../util/json-depth.js";
import { parseDecimalNumber, parseWholeNumber } from "../util/numbers.js";
import { didYouMean } from "../util/suggest.js";

/**
 * zod pieces for commander's raw option values. Each names its flag so a bad
 * value is reported as `--timeout: invalid duration "5"`.
 */
export const duration = (flag: string) =>
  z.string().transform((text) => parseDuration(text, { flag }));

/** A duration where a bare `0` means "none" (`--retry-window 0`: no retries). */
export const durationOrZero = (flag: string) =>
  z.string().transform((text) => (text.trim() === "0" ? 0 : parseDuration(text, { flag })));

export const integer = (flag: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().transform((text) => {
    const value = parseWholeNumber(text);
    if (value === undefined || value < min || value > max) {
      throw new UsageError(`invalid value "${text}": expected a whole number from ${min} to ${max}`, { flag });
    }
    return value;
  });

export const number = (flag: string, min: number, max: number) =>
  z.string().transform((text) => {
    const value = parseDecimalNumber(text);
    if (value === undefined || value < min || value > max) {
      throw new UsageError(`invalid value "${text}": expected a number from ${min} to ${max}`, { flag });
    }
    return value;
  });

export const jsonObject = (flag: string) =>
  z.string().transform((text) => {
    let value: unknown;
    try {
      value = parseJson(text);
    } catch (error) {
      throw new UsageError(`not valid JSON (${(error as Error).message})`, { flag });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new UsageError(`expected a JSON object, got ${text}`, { flag });
    }
    return value as Record<string, unknown>;
  });

/** A message type from `flag`, or from a command's arguments when `flag` is undefined (the error then names no flag). */
export const messageType = (flag: string | undefined) =>
  z.string().transform((text): MessageType => {
    if (!(MESSAGE_TYPES as readonly string[]).includes(text)) {
      const message = `unknown message type "${text}"${didYouMean(text, MESSAGE_TYPES)}: expected one of ${MESSAGE_TYPES.join(", ")}`;
      throw new UsageError(message, flag !== undefined ? { flag } : undefined);
    }
    return text as MessageType;
  });

export const aliasKeys = z.string().transform((text) => {
  if (text !== "spec" && text !== "camel") throw new UsageError(`invalid value "${text}": expected spec or camel`, { flag: "--alias-keys" });
  return text;
});

export const isoDate = (flag: string) =>
  z.string().transform((text) => {
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) throw new UsageError(`invalid date "${text}": expected ISO 8601, e.g. 2024-01-01T00:00:00.000Z`, { flag });
    return date;
  });

// A 1xx is not a final answer: a sender given one would wait for ever.
export const httpStatus = (flag: string) => integer(flag, 200, 599);

/** exactOptionalPropertyTypes: zod's optional outputs carry explicit undefined; drop those keys. */
export function stripUndefined<T extends Record<string, unknown>>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}
