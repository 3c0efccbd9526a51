import { z } from "zod";
import { isIsoDateTime, isTimestamp } from "./timestamps.js";

// In a module without zod, so `--help` can list them without loading zod.
export { MESSAGE_TYPES, isMessageType, type MessageType } from "./names.js";
import type { MessageType } from "./names.js";

/** The call types of the inbound collection API and the client library: every message type but `delete`. */
export const CALL_TYPES = ["identify", "track", "page", "screen", "group", "alias"] as const;
export type CallType = (typeof CALL_TYPES)[number];

export { TIMESTAMP_PATTERN, isTimestamp, isIsoDateTime, normalizeTimestamp } from "./timestamps.js";

/** What accepted messages carry in `timestamp`, `sentAt`, `receivedAt`, `originalTimestamp`. */
export const timestampSchema = z
  .string()
  .refine(isIsoDateTime, { message: "expected an ISO 8601 date-time, e.g. 2012-12-02T00:30:08.276Z or 2009-11-10T23:00:00+0000" });

/** What built messages carry: UTC with milliseconds. */
const builtTimestampSchema = z.string().refine(isTimestamp, { message: "expected an ISO 8601 UTC timestamp with milliseconds, e.g. 2012-12-02T00:30:08.276Z" });

const record = z.record(z.string(), z.unknown());

const pagePropertiesSchema = z.looseObject({
  path: z.string().optional(),
  referrer: z.string().optional(),
  title: z.string().optional(),
  url: z.string().optional(),
});

/** The screen context built screens carry (docs/messages.md#built-messages); accepted screens need none of it (docs/messages.md#accepted-messages). */
const screenContextSchema = z.looseObject({
  device: z.looseObject({ model: z.string(), type: z.string() }),
  os: z.looseObject({ name: z.string(), version: z.string() }),
  app: z.looseObject({ build: z.string(), name: z.string(), version: z.string() }),
});

/** Which alias keys a message uses (docs/messages.md#alias-keys): `Previous ID`/`User ID`, or the real service's camelCase. */
export type AliasKeys = "spec" | "camel";

/**
 * A field of a message type, as real traffic may carry it (docs/messages.md#accepted-messages). `identity` fields (`userId`, `anonymousId`) may be null or
 * absent as long as one of them is a non-empty string; `optional` ones may be
 * absent. `call`: a required field an incoming API call may leave out (serve fills it).
 */
export interface FieldSpec {
  schema: z.ZodType;
  presence: "required" | "identity" | "optional";
  call?: true;
}

/** Any positive integer: 1 and 2 both occur in real traffic. */
export const versionSchema = z.number().int().positive();
const version: FieldSpec = { schema: versionSchema, presence: "required", call: true };
const identity: FieldSpec = { schema: z.string().nullable(), presence: "identity" };
const timestamp: FieldSpec = { schema: timestampSchema, presence: "required", call: true };
const optionalString: FieldSpec = { schema: z.string(), presence: "optional" };
const optionalRecord: FieldSpec = { schema: record, presence: "optional" };
const optionalTimestamp: FieldSpec = { schema: timestampSchema, presence: "optional" };
const typeField = (type: MessageType): FieldSpec => ({ schema: z.literal(type), presence: "required" });
const body = (schema: z.ZodType): FieldSpec => ({ schema, presence: "required", call: true });

/** The real service's common fields, known and optional on every type. */
const COMMON: Record<string, FieldSpec> = {
  context: optionalRecord,
  messageId: optionalString,
  integrations: optionalRecord,
  receivedAt: optionalTimestamp,
  sentAt: optionalTimestamp,
  originalTimestamp: optionalTimestamp,
  channel: optionalString,
};
/**
 * The common fields real traffic may send as `null` (a Personas identify has `"sentAt": null`):
 * null is taken as absent by every check (serve, listen, send, replay).
 */
export const NULLABLE_COMMON_KEYS: ReadonlySet<string> = new Set(Object.keys(COMMON));
const COMMON_ANONYMOUS: Record<string, FieldSpec> = { ...COMMON, anonymousId: { schema: z.string().nullable(), presence: "optional" } };

/** The keys of each message type, in the order docs/messages.md#message-types lists them, then the common fields. */
export const FIELDS: Record<MessageType | "aliasCamel", Record<string, FieldSpec>> = {
  page: {
    version,
    type: typeField("page"),
    userId: identity,
    anonymousId: identity,
    properties: body(pagePropertiesSchema),
    timestamp,
    name: optionalString,
    category: optionalString,
    ...COMMON,
  },
  screen: {
    version,
    type: typeField("screen"),
    userId: identity,
    anonymousId: identity,
    name: body(z.string()),
    timestamp,
    category: optionalString,
    properties: optionalRecord,
    ...COMMON,
  },
  identify: { version, type: typeField("identify"), userId: identity, anonymousId: identity, traits: body(record), timestamp, ...COMMON },
  track: {
    version,
    type: typeField("track"),
    userId: identity,
    anonymousId: identity,
    event: { schema: z.string().min(1), presence: "required" },
    properties: body(record),
    timestamp,
    ...COMMON,
  },
  alias: {
    version,
    type: typeField("alias"),
    "Previous ID": { schema: z.string(), presence: "required" },
    "User ID": { schema: z.string(), presence: "required" },
    timestamp,
    ...COMMON_ANONYMOUS,
  },
  aliasCamel: {
    version,
    type: typeField("alias"),
    previousId: { schema: z.string().min(1), presence: "required" },
    userId: { schema: z.string().min(1), presence: "required" },
    timestamp,
    ...COMMON_ANONYMOUS,
  },
  group: {
    version,
    type: typeField("group"),
    groupId: { schema: z.string().min(1), presence: "required" },
    userId: identity,
    anonymousId: identity,
    traits: body(record),
    timestamp,
    ...COMMON,
  },
  delete: { type: typeField("delete"), userId: { schema: z.string(), presence: "required" }, timestamp, ...COMMON_ANONYMOUS },
};

/** Where built messages are stricter than accepted ones (docs/messages.md#built-messages). */
const BUILT: Record<string, z.ZodType> = { version: z.literal(1), timestamp: builtTimestampSchema };

type Json = Record<string, unknown>;
/** The real service's common fields (docs/messages.md#whole-messages-from-serve): what serve forwards beside each type's keys. */
interface Base {
  timestamp: string;
  context?: Json;
  messageId?: string;
  integrations?: Json;
  receivedAt?: string;
  sentAt?: string;
  originalTimestamp?: string;
  channel?: string;
}
interface Identity {
  userId?: string | null;
  anonymousId?: string | null;
}

export interface PageMessage extends Base, Identity {
  version: 1;
  type: "page";
  name?: string;
  category?: string;
  properties: { path?: string; referrer?: string; title?: string; url?: string; [key: string]: unknown };
}
export interface ScreenContext {
  device: { model: string; type: string };
  os: { name: string; version: string };
  app: { build: string; name: string; version: string };
  [key: string]: unknown;
}
export interface ScreenMessage extends Base, Identity {
  version: 1;
  type: "screen";
  name: string;
  category?: string;
  properties?: Json;
  /** Built screens carry the ScreenContext of docs/messages.md#built-messages; forwarded ones whatever context the call had. */
  context?: ScreenContext | Json;
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
  anonymousId?: string;
  version: 1;
  type: "alias";
  "Previous ID": string;
  "User ID": string;
}
export interface AliasMessageCamel extends Base {
  anonymousId?: string;
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
export interface DeleteMessage extends Omit<Base, "context"> {
  type: "delete";
  userId: string;
}

/** One outgoing webhook body (docs/messages.md#message-types, docs/messages.md#built-messages). */
export type Message = PageMessage | ScreenMessage | IdentifyMessage | TrackMessage | AliasMessage | GroupMessage | DeleteMessage;

/**
 * Zod schema of a BUILT message of one type (strict: unknown keys rejected;
 * `version: 1`, millisecond UTC timestamps, the built screen context: docs/messages.md#built-messages), built
 * from FIELDS. Accepted messages are checked by checkMessage instead.
 */
export function schemaFor(type: MessageType, aliasKeys: AliasKeys = "spec"): z.ZodType {
  const fields = type === "alias" && aliasKeys === "camel" ? FIELDS.aliasCamel : FIELDS[type];
  const shape: Record<string, z.ZodType> = {};
  for (const [key, spec] of Object.entries(fields)) {
    const schema = type === "screen" && key === "context" ? screenContextSchema : (BUILT[key] ?? spec.schema);
    const required = spec.presence === "required" || (type === "screen" && key === "context");
    shape[key] = required ? schema : schema.optional();
  }
  return z.strictObject(shape);
}
