import { UsageError } from "../../errors.js";
import { MESSAGE_TYPES, type MessageType } from "../../messages/names.js";
import type { AliasKeys } from "../../messages/schemas.js";
import { parseScript } from "../../receiver/answer-plan.js";
import { schemeNamed } from "../../signing/schemes.js";
import { parseDuration } from "../../util/duration.js";
import { parseUntrustedJson } from "../../json/parse.js";
import { parseDecimalNumber, parseWholeNumber } from "../../util/numbers.js";
import { didYouMean } from "../../util/suggest.js";
import {
  attributeOf,
  DESTINATION_NAMES,
  METHOD_NAMES,
  RETRY_RULES_NAMES,
  type OptionsOf,
  type OptionSpec,
  type OptionTable,
  type ValueKind,
  type ValueOfKind,
} from "./spec.js";

/*
 * commander's raw option values to typed options: one parse function per kind
 * of value, each throwing a UsageError that names the flag, so a bad value is
 * reported as `--timeout: invalid duration "5"`. Loaded only when a command
 * runs, so `--help` stays light.
 */

type Parsers = { readonly [K in ValueKind]: (raw: unknown, spec: OptionSpec) => ValueOfKind[K] };

const PARSERS: Parsers = {
  string: (raw, spec) => {
    const text = asString(raw, spec);
    // The wording zod gave this check when zod parsed the flags, kept as it was.
    if (spec.nonEmpty && text === "") throw new UsageError("Too small: expected string to have >=1 characters", { flag: spec.flag });
    return text;
  },
  switch: (raw, spec) => {
    if (typeof raw !== "boolean") throw invalidInput("boolean", raw, spec);
    return raw;
  },
  list: (raw, spec) => asList(raw, spec).map((value) => asString(value, spec)),
  duration: (raw, spec) => parseDuration(asString(raw, spec), { flag: spec.flag }),
  // A bare `0` means none (`--retry-window 0`: no retries).
  durationOrZero: (raw, spec) => {
    const text = asString(raw, spec);
    return text.trim() === "0" ? 0 : parseDuration(text, { flag: spec.flag });
  },
  integer: (raw, spec) => integer(asString(raw, spec), spec.flag, spec.min ?? Number.MIN_SAFE_INTEGER, spec.max ?? Number.MAX_SAFE_INTEGER),
  number: (raw, spec) => {
    const text = asString(raw, spec);
    const [min, max] = [spec.min ?? -Number.MAX_VALUE, spec.max ?? Number.MAX_VALUE];
    const value = parseDecimalNumber(text);
    if (value === undefined || value < min || value > max) {
      throw new UsageError(`invalid value "${text}": expected a number from ${min} to ${max}`, { flag: spec.flag });
    }
    return value;
  },
  // A 1xx is not a final answer: a sender given one would wait for ever.
  status: (raw, spec) => integer(asString(raw, spec), spec.flag, 200, 599),
  jsonObject: (raw, spec) => {
    const text = asString(raw, spec);
    let value: unknown;
    try {
      value = parseUntrustedJson(text);
    } catch (error) {
      throw new UsageError(`not valid JSON (${(error as Error).message})`, { flag: spec.flag });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new UsageError(`expected a JSON object, got ${text}`, { flag: spec.flag });
    }
    return value as Record<string, unknown>;
  },
  date: (raw, spec) => {
    const text = asString(raw, spec);
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) throw new UsageError(`invalid date "${text}": expected ISO 8601, e.g. 2024-01-01T00:00:00.000Z`, { flag: spec.flag });
    return date;
  },
  messageType: (raw, spec) => messageType(asString(raw, spec), spec.flag),
  messageTypes: (raw, spec) => asList(raw, spec).map((value) => messageType(asString(value, spec), spec.flag)),
  aliasKeys: (raw, spec): AliasKeys => {
    const text = asString(raw, spec);
    if (text !== "spec" && text !== "camel") throw new UsageError(`invalid value "${text}": expected spec or camel`, { flag: "--alias-keys" });
    return text;
  },
  script: (raw, spec) => parseScript(asString(raw, spec)),
  destination: (raw, spec) => oneOf(asString(raw, spec), DESTINATION_NAMES, spec.flag),
  httpMethod: (raw, spec) => oneOf(asString(raw, spec).toUpperCase(), METHOD_NAMES, spec.flag),
  scheme: (raw, spec) => schemeNamed(asString(raw, spec), { flag: spec.flag }).name,
  retryRules: (raw, spec) => oneOf(asString(raw, spec), RETRY_RULES_NAMES, spec.flag),
};

function oneOf<T extends string>(text: string, values: readonly T[], flag: string): T {
  if (!(values as readonly string[]).includes(text))
    throw new UsageError(`invalid value "${text}"${didYouMean(text, values)}: expected ${values.slice(0, -1).join(", ")} or ${values.at(-1)}`, { flag });
  return text as T;
}

/**
 * Parses commander's raw option bag against a table, in table order: the
 * typed options, with absent options left out (a `default: false` switch is
 * false). A bad value is a UsageError naming its flag.
 */
export function parseTable<T extends OptionTable>(table: T, raw: Readonly<Record<string, unknown>>): OptionsOf<T> {
  const options: Record<string, unknown> = {};
  for (const spec of table) {
    const value = raw[attributeOf(spec.flag)];
    if (value === undefined) {
      if (spec.default === false) options[spec.key] = false;
      continue;
    }
    options[spec.key] = PARSERS[spec.kind](value, spec);
  }
  return options as OptionsOf<T>;
}

/** Message types given as arguments (`generate track identify`): an error names the value, not commander's `[types...]`. */
export function parseMessageTypes(values: readonly string[]): MessageType[] {
  return values.map((value) => messageType(value, undefined));
}

/** A message type from `flag`, or from a command's arguments when `flag` is undefined (the error then names no flag). */
function messageType(text: string, flag: string | undefined): MessageType {
  if (!(MESSAGE_TYPES as readonly string[]).includes(text)) {
    const message = `unknown message type "${text}"${didYouMean(text, MESSAGE_TYPES)}: expected one of ${MESSAGE_TYPES.join(", ")}`;
    throw new UsageError(message, flag !== undefined ? { flag } : undefined);
  }
  return text as MessageType;
}

function integer(text: string, flag: string, min: number, max: number): number {
  const value = parseWholeNumber(text);
  if (value === undefined || value < min || value > max) {
    throw new UsageError(`invalid value "${text}": expected a whole number from ${min} to ${max}`, { flag });
  }
  return value;
}

// commander hands strings (and arrays of them for repeatable options, booleans for switches); anything else is a bug of ours.
function asString(raw: unknown, spec: OptionSpec): string {
  if (typeof raw !== "string") throw invalidInput("string", raw, spec);
  return raw;
}

function asList(raw: unknown, spec: OptionSpec): unknown[] {
  if (!Array.isArray(raw)) throw invalidInput("array", raw, spec);
  return raw;
}

function invalidInput(expected: string, raw: unknown, spec: OptionSpec): UsageError {
  const received = raw === null ? "null" : Array.isArray(raw) ? "array" : typeof raw;
  return new UsageError(`Invalid input: expected ${expected}, received ${received}`, { flag: spec.flag });
}
