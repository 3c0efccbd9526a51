import type { AliasKeys, Message } from "../messages/schemas.js";
import type { IngestCall } from "./ingest.js";

export interface TransformOptions {
  aliasKeys: AliasKeys;
  /** The server's time, used when the call has no timestamp (docs/serve-api.md#timestamps-and-clock-skew). */
  receivedAt: Date;
  /** The client's address, added to `context.ip` (docs/serve-api.md#from-call-to-message). */
  ip?: string | undefined;
}

type Json = Record<string, unknown>;

/**
 * One accepted call → the whole outgoing message (docs/messages.md#whole-messages-from-serve):
 * the type's keys in the order of docs/messages.md#message-types, `anonymousId` beside (or instead of) `userId`, then
 * the call's `context` with the client's `ip` added, `messageId`,
 * `integrations`, `receivedAt`, `sentAt` and `originalTimestamp`.
 */
export function toMessage(call: IngestCall, options: TransformOptions): Message {
  const context = contextOf(call, options.ip);
  const identity = {
    ...(call.userId !== undefined ? { userId: call.userId } : {}),
    ...(call.anonymousId !== undefined ? { anonymousId: call.anonymousId } : {}),
  };
  const common = { ...timesOf(call, options.receivedAt), ...(context === undefined ? {} : { context }), ...commonOf(call, options.receivedAt) };

  switch (call.type) {
    case "page": {
      const naming = { ...(call.name !== undefined ? { name: call.name } : {}), ...(call.category !== undefined ? { category: call.category } : {}) };
      return { version: 1, type: "page", ...identity, properties: call.properties ?? {}, ...common, ...naming };
    }
    case "screen": {
      const name = call.name ?? stringOr(call.properties?.["name"], "");
      return { version: 1, type: "screen", ...identity, name, ...common, ...(call.properties ? { properties: call.properties } : {}) };
    }
    case "identify":
      return { version: 1, type: "identify", ...identity, traits: call.traits ?? {}, ...common };
    case "track":
      return { version: 1, type: "track", ...identity, event: call.event ?? "", properties: call.properties ?? {}, ...common };
    case "group":
      return { version: 1, type: "group", groupId: call.groupId ?? "", ...identity, traits: call.traits ?? {}, ...common };
    case "alias": {
      const anonymous = call.anonymousId !== undefined ? { anonymousId: call.anonymousId } : {};
      return options.aliasKeys === "camel"
        ? { version: 1, type: "alias", previousId: call.previousId ?? "", userId: call.userId ?? "", ...common, ...anonymous }
        : { version: 1, type: "alias", "Previous ID": call.previousId ?? "", "User ID": call.userId ?? "", ...common, ...anonymous };
    }
  }
}

/**
 * `timestamp`, corrected for the client's clock as the real service does
 * (docs/serve-api.md#timestamps-and-clock-skew): with `sentAt`, timestamp = receivedAt − (sentAt −
 * originalTimestamp), which keeps historical imports in the past; without it,
 * the call's timestamp, else the server's time.
 */
function timesOf(call: IngestCall, receivedAt: Date): { timestamp: string; originalTimestamp?: string } {
  if (call.timestamp === undefined) return { timestamp: receivedAt.toISOString() };
  if (call.sentAt === undefined) return { timestamp: call.timestamp };
  const skew = Date.parse(call.sentAt) - Date.parse(call.timestamp);
  return { timestamp: new Date(receivedAt.getTime() - skew).toISOString(), originalTimestamp: call.timestamp };
}

function commonOf(call: IngestCall, receivedAt: Date): Json {
  return {
    ...(call.messageId !== undefined ? { messageId: call.messageId } : {}),
    ...(call.integrations !== undefined ? { integrations: call.integrations } : {}),
    receivedAt: receivedAt.toISOString(),
    ...(call.sentAt !== undefined ? { sentAt: call.sentAt } : {}),
  };
}

/** The `delete` message of a deletion request (docs/messages.md#message-types: no version, no context). */
export function deleteMessage(userId: string, receivedAt: Date): Message {
  return { type: "delete", userId, timestamp: receivedAt.toISOString() };
}

function contextOf(call: IngestCall, ip: string | undefined): Json | undefined {
  if (ip === undefined || ip === "") return call.context;
  // A client-supplied ip (a server forwarding its visitor's) is kept: it is the better one.
  if (call.context && typeof call.context["ip"] === "string") return call.context;
  return { ...call.context, ip };
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}
