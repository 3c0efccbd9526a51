import { ValidationError } from "../errors.js";
import { MAX_MESSAGE_BYTES } from "../messages/limits.js";
import { isPlainObject } from "../json/parse.js";
import type { CallType } from "./types.js";

/**
 * Synchronous checks of a call (pure). The required-field messages and their
 * order are the original library's (docs/serve-api.md#client-validation); type checks follow them.
 */

export const MISSING_IDENTITY = "You must pass either an 'anonymousId' or 'userId'.";
export const MISSING_EVENT = "You must pass 'event'.";
export const MISSING_GROUP_ID = "You must pass a 'groupId'.";
export const MISSING_USER_ID = "You must pass a 'userId'.";
export const MISSING_PREVIOUS_ID = "You must pass a 'previousId'.";

/** An empty string counts as missing, as in the original library. */
function missing(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

/** Throws the first problem of `message` as a call of `type`. */
export function validateCall(type: CallType, message: unknown): asserts message is Record<string, unknown> {
  if (!isPlainObject(message)) throw new ValidationError(`You must pass a message object to ${type}().`);
  switch (type) {
    case "identify":
    case "page":
    case "screen":
      requireIdentity(message);
      break;
    case "track":
      if (missing(message.event)) throw new ValidationError(MISSING_EVENT);
      requireIdentity(message);
      break;
    case "group":
      if (missing(message.groupId)) throw new ValidationError(MISSING_GROUP_ID);
      requireIdentity(message);
      break;
    case "alias":
      if (missing(message.userId)) throw new ValidationError(MISSING_USER_ID);
      if (missing(message.previousId)) throw new ValidationError(MISSING_PREVIOUS_ID);
      break;
  }
  // Unrolled (not a loop over key names): this runs on every call of a hot path.
  expectId(message.userId, "userId");
  expectId(message.anonymousId, "anonymousId");
  expectString(message.event, "event");
  expectId(message.groupId, "groupId");
  expectId(message.previousId, "previousId");
  expectString(message.name, "name");
  expectString(message.category, "category");
  expectString(message.messageId, "messageId");
  expectObject(message.properties, "properties");
  expectObject(message.traits, "traits");
  expectObject(message.context, "context");
  expectObject(message.integrations, "integrations");
  const timestamp = message.timestamp;
  if (timestamp !== undefined && timestamp !== null) {
    const valid = timestamp instanceof Date ? !Number.isNaN(timestamp.getTime()) : typeof timestamp === "string" && !Number.isNaN(Date.parse(timestamp));
    if (!valid) throw new ValidationError(`'timestamp' must be a valid Date or ISO 8601 string, got ${describeType(timestamp)}.`);
  }
}

function expectString(value: unknown, key: string): void {
  if (value !== undefined && value !== null && typeof value !== "string") {
    throw new ValidationError(`'${key}' must be a string, got ${describeType(value)}.`);
  }
}

/** Ids may be numbers (analytics-node accepts them); they are sent as strings. */
function expectId(value: unknown, key: string): void {
  if (typeof value === "number" && Number.isFinite(value)) return;
  if (value !== undefined && value !== null && typeof value !== "string") {
    throw new ValidationError(`'${key}' must be a string or a number, got ${describeType(value)}.`);
  }
}

/** The message's numeric ids as strings, to spread over it; empty when there are none (the common case). */
export function wireIds(message: Record<string, unknown>): Record<string, string> {
  let ids: Record<string, string> | undefined;
  for (const key of ID_KEYS) {
    const value = message[key];
    if (typeof value !== "number") continue;
    ids ??= {};
    ids[key] = String(value);
  }
  return ids ?? NO_IDS;
}

const ID_KEYS = ["userId", "anonymousId", "groupId", "previousId"] as const;
const NO_IDS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function expectObject(value: unknown, key: string): void {
  if (value !== undefined && value !== null && !isPlainObject(value)) {
    throw new ValidationError(`'${key}' must be an object, got ${describeType(value)}.`);
  }
}

function requireIdentity(message: Record<string, unknown>): void {
  if (missing(message.userId) && missing(message.anonymousId)) throw new ValidationError(MISSING_IDENTITY);
}

/** A value's kind for an error message (strings shown, shortened). */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "an invalid Date";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

/** Throws when a message's JSON is over the 32 KB limit. */
export function checkMessageSize(type: CallType, bytes: number): void {
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new ValidationError(`Your ${type} message is ${bytes} bytes of JSON; a message must be at most 32 KB (${MAX_MESSAGE_BYTES} bytes).`);
  }
}
