import { createHash } from "node:crypto";
import { SCHEME_NAMES, SCHEMES, type Scheme } from "./schemes.js";
import { messageId, signableId } from "./sign.js";

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

/** Whether a re-send keeps `id`: one `scheme`'s signer takes as it is (signableId), of at most 256 characters. */
export function usableMessageId(scheme: Scheme, id: string): boolean {
  return id.length <= 256 && signableId(scheme, id);
}
