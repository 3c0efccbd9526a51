import { deepFrozen } from "../util/frozen.js";

/** The seven outgoing message types (docs/messages.md#message-types); frozen, as the package exports them. */
export const MESSAGE_TYPES = deepFrozen(["page", "screen", "identify", "track", "alias", "group", "delete"] as const);
export type MessageType = (typeof MESSAGE_TYPES)[number];

export function isMessageType(value: unknown): value is MessageType {
  return typeof value === "string" && (MESSAGE_TYPES as readonly string[]).includes(value);
}
