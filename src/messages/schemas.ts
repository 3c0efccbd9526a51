import { z } from "zod";

// In a module without zod, so `--help` can list them without loading zod.
export { MESSAGE_TYPES, isMessageType, type MessageType } from "./names.js";
import type { MessageType } from "./names.js";

/** `2012-12-02T00:30:08.276Z`: ISO 8601, UTC, milliseconds. */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function isTimestamp(value: unknown): value is string {
  if (typeof value !== "string" || !TIMESTAMP_PATTERN.test(value)) return false;
  const date = new Date(value);
  // Round-tripping rejects dates that do not exist (2021-02-30T…).
  return !Number.isNaN(date.getTime()) && date.toISOString() === value;
}

export const timestampSchema = z
  .string()
  .refine(isTimestamp, { message: "expected an ISO 8601 UTC timestamp with milliseconds, e.g. 2012-12-02T00:30:08.276Z" });

const record = z.record(z.string(), z.unknown());

export const pagePropertiesSchema = z.looseObject({
  path: z.string().optional(),
  referrer: z.string().optional(),
  title: z.string().optional(),
  url: z.string().optional(),
});

export const screenContextSchema = z.looseObject({
  device: z.looseObject({ model: z.string(), type: z.string() }),
  os: z.looseObject({ name: z.string(), version: z.string() }),
  app: z.looseObject({ build: z.string(), name: z.string(), version: z.string() }),
});

/** Which alias keys a message uses: SPEC.md's `Previous ID`/`User ID`, or the real service's camelCase. */
export type AliasKeys = "spec" | "camel";

/**
 * A field of a message type. `identity` fields (`userId`) may be replaced by
 * `anonymousId` (CONTRACT.md 1); `optional` ones may be absent.
 */
export interface FieldSpec {
  schema: z.ZodType;
  presence: "required" | "identity" | "optional";
}

const version: FieldSpec = { schema: z.literal(1), presence: "required" };
const userId: FieldSpec = { schema: z.string(), presence: "identity" };
const timestamp: FieldSpec = { schema: timestampSchema, presence: "required" };
const context: FieldSpec = { schema: record, presence: "optional" };
const anonymousId: FieldSpec = { schema: z.string(), presence: "optional" };
const typeField = (type: MessageType): FieldSpec => ({ schema: z.literal(type), presence: "required" });

/** The keys of each message type, in the order SPEC.md 4.1 lists them. */
export const FIELDS: Record<MessageType | "aliasCamel", Record<string, FieldSpec>> = {
  page: {
    version,
    type: typeField("page"),
    userId,
    properties: { schema: pagePropertiesSchema, presence: "required" },
    timestamp,
    context,
    anonymousId,
  },
  screen: {
    version,
    type: typeField("screen"),
    userId,
    name: { schema: z.string(), presence: "required" },
    timestamp,
    context: { schema: screenContextSchema, presence: "required" },
    anonymousId,
  },
  identify: { version, type: typeField("identify"), userId, traits: { schema: record, presence: "required" }, timestamp, context, anonymousId },
  track: {
    version,
    type: typeField("track"),
    userId,
    event: { schema: z.string().min(1), presence: "required" },
    properties: { schema: record, presence: "required" },
    timestamp,
    context,
    anonymousId,
  },
  alias: {
    version,
    type: typeField("alias"),
    "Previous ID": { schema: z.string(), presence: "required" },
    "User ID": { schema: z.string(), presence: "required" },
    timestamp,
    context,
  },
  aliasCamel: {
    version,
    type: typeField("alias"),
    previousId: { schema: z.string(), presence: "required" },
    userId: { schema: z.string(), presence: "required" },
    timestamp,
    context,
  },
  group: {
    version,
    type: typeField("group"),
    groupId: { schema: z.string(), presence: "required" },
    userId,
    traits: { schema: record, presence: "required" },
    timestamp,
    context,
    anonymousId,
  },
  delete: { type: typeField("delete"), userId: { schema: z.string(), presence: "required" }, timestamp },
};

type Json = Record<string, unknown>;
interface Base {
  timestamp: string;
  context?: Json;
}
interface Identity {
  userId?: string;
  anonymousId?: string;
}

export interface PageMessage extends Base, Identity {
  version: 1;
  type: "page";
  properties: { path?: string; referrer?: string; title?: string; url?: string; [key: string]: unknown };
}
export interface ScreenContext {
  device: { model: string; type: string };
  os: { name: string; version: string };
  app: { build: string; name: string; version: string };
  [key: string]: unknown;
}
export interface ScreenMessage extends Identity {
  version: 1;
  type: "screen";
  name: string;
  timestamp: string;
  context: ScreenContext;
}
export interface IdentifyMessage extends Base, Identity {
  version: 1;
  type: "identify";
  traits: Json;
}
export interface TrackMessage extends Base, Identity {
  version: 1;
  type: "track";
  event: string;
  properties: Json;
}
export interface AliasMessageSpec extends Base {
  version: 1;
  type: "alias";
  "Previous ID": string;
  "User ID": string;
}
export interface AliasMessageCamel extends Base {
  version: 1;
  type: "alias";
  previousId: string;
  userId: string;
}
export type AliasMessage = AliasMessageSpec | AliasMessageCamel;
export interface GroupMessage extends Base, Identity {
  version: 1;
  type: "group";
  groupId: string;
  traits: Json;
}
export interface DeleteMessage {
  type: "delete";
  userId: string;
  timestamp: string;
}

/** One outgoing webhook body (SPEC.md 4.1, CONTRACT.md 1). */
export type Message =
  | PageMessage
  | ScreenMessage
  | IdentifyMessage
  | TrackMessage
  | AliasMessage
  | GroupMessage
  | DeleteMessage;

/** Zod schema of one type (strict: unknown keys rejected), built from FIELDS. */
export function schemaFor(type: MessageType, aliasKeys: AliasKeys = "spec"): z.ZodType {
  const fields = type === "alias" && aliasKeys === "camel" ? FIELDS.aliasCamel : FIELDS[type];
  const shape: Record<string, z.ZodType> = {};
  for (const [key, spec] of Object.entries(fields)) {
    shape[key] = spec.presence === "required" ? spec.schema : spec.schema.optional();
  }
  return z.strictObject(shape);
}
