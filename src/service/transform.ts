import type { AliasKeys, Message } from "../messages/schemas.js";
import type { IngestCall } from "./ingest.js";

export interface TransformOptions {
  aliasKeys: AliasKeys;
  /** The server's time, used when the call has no timestamp (SPEC.md 4.4). */
  receivedAt: Date;
  /** The client's address, added to `context.ip` (SPEC.md 1). */
  ip?: string;
}

type Json = Record<string, unknown>;

/**
 * One accepted call → the outgoing message of CONTRACT.md 1, keys in the order
 * of SPEC.md 4.1, plus the call's `context` with the client's `ip` added. A
 * call without `userId` carries `anonymousId` in its place.
 */
export function toMessage(call: IngestCall, options: TransformOptions): Message {
  const timestamp = call.timestamp ?? options.receivedAt.toISOString();
  const context = contextOf(call, options.ip);
  const identity: { userId: string } | { anonymousId: string } =
    call.userId !== undefined ? { userId: call.userId } : { anonymousId: call.anonymousId ?? "" };
  const withContext = context === undefined ? {} : { context };

  switch (call.type) {
    case "page":
      return { version: 1, type: "page", ...identity, properties: call.properties ?? {}, timestamp, ...withContext };
    case "screen":
      return {
        version: 1,
        type: "screen",
        ...identity,
        name: call.name ?? stringOr(call.properties?.["name"], ""),
        timestamp,
        context: (context ?? {}) as never,
      };
    case "identify":
      return { version: 1, type: "identify", ...identity, traits: call.traits ?? {}, timestamp, ...withContext };
    case "track":
      return { version: 1, type: "track", ...identity, event: call.event ?? "", properties: call.properties ?? {}, timestamp, ...withContext };
    case "group":
      return { version: 1, type: "group", groupId: call.groupId ?? "", ...identity, traits: call.traits ?? {}, timestamp, ...withContext };
    case "alias":
      return options.aliasKeys === "camel"
        ? { version: 1, type: "alias", previousId: call.previousId ?? "", userId: call.userId ?? "", timestamp, ...withContext }
        : { version: 1, type: "alias", "Previous ID": call.previousId ?? "", "User ID": call.userId ?? "", timestamp, ...withContext };
  }
}

/** The `delete` message of a deletion request (SPEC.md 2.2: no version, no context). */
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
