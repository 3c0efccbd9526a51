import type { z } from "zod";
import { checkMessage, type ShapeCheck } from "../messages/check.js";
import { FIELDS, MESSAGE_TYPES, TIMESTAMP_PATTERN, timestampSchema, type FieldSpec, type MessageType } from "../messages/schemas.js";

/**
 * The shape check on the receiver's hot path. Same answers as checkMessage
 * (it is the fallback for anything not plainly valid), but a well-formed
 * message with only known keys is recognised without running zod: simple
 * field schemas (literals, plain strings, records, the timestamp) become
 * plain predicates derived from FIELDS once at load.
 */
export function checkShape(value: unknown, strict: boolean): ShapeCheck {
  if (plainlyValid(value)) return { type: (value as { type: MessageType }).type, errors: [], warnings: [] };
  return checkMessage(value, strict ? { strict: true } : {});
}

type Predicate = (value: unknown) => boolean;
interface FastField {
  key: string;
  presence: FieldSpec["presence"];
  test: Predicate;
}

// Alias has two key styles; checkMessage picks between them, so alias always takes the full path.
const FAST: Partial<Record<MessageType, { fields: FastField[]; known: Set<string> }>> = {};
for (const type of MESSAGE_TYPES) {
  if (type === "alias") continue;
  const fields = Object.entries(FIELDS[type]).map(([key, spec]) => ({ key, presence: spec.presence, test: predicateFor(spec.schema) }));
  FAST[type] = { fields, known: new Set(Object.keys(FIELDS[type])) };
}

function plainlyValid(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  const type = message["type"];
  const spec = typeof type === "string" && Object.hasOwn(FAST, type) ? FAST[type as MessageType] : undefined;
  if (spec === undefined) return false;
  for (const key in message) if (!spec.known.has(key)) return false;
  for (const field of spec.fields) {
    const fieldValue = message[field.key];
    const present = fieldValue !== undefined && Object.hasOwn(message, field.key);
    if (!present) {
      if (field.presence === "optional") continue;
      if (field.presence === "identity" && typeof message["anonymousId"] === "string") continue;
      return false;
    }
    if (!field.test(fieldValue)) return false;
  }
  return true;
}

function predicateFor(schema: z.ZodType): Predicate {
  if (schema === timestampSchema) return quickTimestamp;
  const def = (schema as unknown as { def: { type: string; checks?: unknown[]; values?: unknown[]; valueType?: { def: { type: string } } } }).def;
  const plain = def.checks === undefined || def.checks.length === 0;
  if (def.type === "literal" && def.values) {
    const values = def.values;
    return (v) => values.includes(v);
  }
  if (def.type === "string" && plain) return (v) => typeof v === "string";
  // z.string().min(n) (track's event): zod compares the string's length.
  const minimum = def.type === "string" ? minLength(def.checks) : undefined;
  if (minimum !== undefined) return (v) => typeof v === "string" && v.length >= minimum;
  if (def.type === "record" && plain && def.valueType?.def.type === "unknown") {
    return (v) => typeof v === "object" && v !== null && !Array.isArray(v);
  }
  return (v) => schema.safeParse(v).success;
}

/** The largest minimum when every check is a plain min_length, else undefined. */
function minLength(checks: unknown[] | undefined): number | undefined {
  if (checks === undefined || checks.length === 0) return undefined;
  let minimum = 0;
  for (const check of checks) {
    const def = (check as { _zod?: { def?: { check?: string; minimum?: unknown } } })._zod?.def;
    if (def?.check !== "min_length" || typeof def.minimum !== "number") return undefined;
    minimum = Math.max(minimum, def.minimum);
  }
  return minimum;
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** isTimestamp without building a Date: the pattern, then a calendar check (about 10x faster). */
function quickTimestamp(value: unknown): boolean {
  if (typeof value !== "string" || value.length !== 24 || !TIMESTAMP_PATTERN.test(value)) return false;
  // The pattern matched, so these positions hold ASCII digits.
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && !leap ? 28 : (DAYS[month - 1] ?? 0);
  return day <= days && digits(value, 11, 2) < 24 && digits(value, 14, 2) < 60 && digits(value, 17, 2) < 60;
}

function digits(text: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}
