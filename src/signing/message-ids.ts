import { createHash } from "node:crypto";
import { SCHEME_NAMES, SCHEMES, type Scheme } from "./schemes.js";
import { messageId } from "./sign.js";

/*
 * The message id a re-send keeps (docs/schemes.md#timestamps): a sender retries and re-sends one
 * message under one id, so an idempotent receiver sees a retry as a retry. Pure.
 */

// Every scheme's id header, lower-case, in the table's order: a recording line's headers are searched in it.
const ID_HEADERS = SCHEME_NAMES.flatMap((name) => {
  const id = SCHEMES[name].id;
  return id ? [id.header.toLowerCase()] : [];
});

/**
 * An id in `scheme`'s form derived from `seed` (a message's own `messageId`): the same seed gives the
 * same id, so replaying one log twice, or a queue after a restart, sends each message under one id.
 */
export function derivedMessageId(scheme: Scheme, seed: string): string {
  return messageId(scheme, () => createHash("sha256").update(seed, "utf8").digest().subarray(0, 16));
}

/** The id header a recorded request carried (`webhook-id`, `svix-id`, `X-GitHub-Delivery`, `X-Shopify-Webhook-Id`: the first found), or undefined. */
export function recordedMessageId(headers: unknown): string | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  for (const name of ID_HEADERS) {
    const value = (headers as Record<string, unknown>)[name];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

/** Whether `scheme`'s signer takes `id` as it is: printable ASCII without spaces at its ends, and no dot where the id is signed. */
export function usableMessageId(scheme: Scheme, id: string): boolean {
  if (!/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(id) || id.length > 256) return false;
  return scheme.content !== "id.timestamp.body" || !id.includes(".");
}
