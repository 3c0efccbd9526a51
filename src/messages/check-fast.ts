import type { z } from "zod";
import { checkMessage, hasIdentity, type ShapeCheck } from "./check.js";
import { FIELDS, MESSAGE_TYPES, timestampSchema, versionSchema, type FieldSpec, type MessageType } from "./schemas.js";
import { isIsoDateTime } from "./timestamps.js";
import { isPlainObject } from "../json/parse.js";

/**
 * The shape check on the hot paths (listen per request, replay's validation
 * pass per line). Same answers as checkMessage
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
const FAST: Partial<Record<MessageType, { fields: FastField[]; known: Set<string>; identity: boolean }>> = {};
for (const type of MESSAGE_TYPES) {
  if (type === "alias") continue;
  const specs = FIELDS[type];
  const fields = Object.entries(specs).map(([key, spec]) => ({ key, presence: spec.presence, test: predicateFor(spec.schema) }));
  FAST[type] = { fields, known: new Set(Object.keys(specs)), identity: fields.some((f) => f.presence === "identity") };
}

function plainlyValid(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const message = value;
  const type = message["type"];
  const spec = typeof type === "string" && Object.hasOwn(FAST, type) ? FAST[type as MessageType] : undefined;
  if (spec === undefined) return false;
  for (const key in message) if (!spec.known.has(key)) return false;
  for (const field of spec.fields) {
    const fieldValue = message[field.key];
    const present = fieldValue !== undefined && Object.hasOwn(message, field.key);
    if (!present) {
      if (field.presence === "required") return false;
      continue;
    }
    if (!field.test(fieldValue)) return false;
  }
  // userId or anonymousId may be null or absent while the other is a non-empty string (docs/messages.md#required-keys).
  return !spec.identity || hasIdentity(message);
}

function predicateFor(schema: z.ZodType): Predicate {
  if (schema === timestampSchema) return isIsoDateTime;
  if (schema === versionSchema) return (v) => typeof v === "number" && Number.isSafeInteger(v) && v > 0;
  const def = (
    schema as unknown as { def: { type: string; checks?: unknown[]; values?: unknown[]; valueType?: { def: { type: string } }; innerType?: unknown } }
  ).def;
  const plain = def.checks === undefined || def.checks.length === 0;
  if (def.type === "literal" && def.values) {
    const values = def.values;
    return (v) => values.includes(v);
  }
  if (def.type === "string" && plain) return (v) => typeof v === "string";
  // z.string().nullable() (userId, anonymousId).
  if (def.type === "nullable" && isPlainString(def)) return (v) => v === null || typeof v === "string";
  // z.string().min(n) (track's event): zod compares the string's length.
  const minimum = def.type === "string" ? minLength(def.checks) : undefined;
  if (minimum !== undefined) return (v) => typeof v === "string" && v.length >= minimum;
  if (def.type === "record" && plain && def.valueType?.def.type === "unknown") {
    return isPlainObject;
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

function isPlainString(def: { innerType?: unknown }): boolean {
  const inner = (def.innerType as { def?: { type: string; checks?: unknown[] } } | undefined)?.def;
  return inner?.type === "string" && (inner.checks === undefined || inner.checks.length === 0);
}
