import { printable } from "../safe-text/printable.js";
import { redactText } from "../safe-text/redact.js";

/**
 * The error of an attempt answered with a status other than 2xx (docs/delivery.md#attempt-outcomes): `HTTP 500`;
 * for a 4xx, the receiver's reason too, from the first bytes of its answer (`HTTP 401:
 * {"error":"X-Signature does not match the body"}`), since a 4xx is final and its body is why.
 * Pure.
 */

/** How much of a 4xx answer's body is read for its excerpt. */
export const EXCERPT_BYTES = 512;
/** How much of it is shown. */
const EXCERPT_CHARACTERS = 200;

/** Whether an answer with this status gets an excerpt, so the transport keeps its first bytes. */
export function wantsExcerpt(status: number): boolean {
  return status >= 400 && status < 500;
}

/** `HTTP 401`, with `: excerpt` when the status wants one and the body starts as text. */
export function statusError(status: number, bodyStart?: Uint8Array | string): string {
  const excerpt = wantsExcerpt(status) && bodyStart !== undefined ? excerptOf(bodyStart) : "";
  return excerpt === "" ? `HTTP ${status}` : `HTTP ${status}: ${excerpt}`;
}

/**
 * One line of the body's start: whitespace runs as one space, credentials in URLs masked (the
 * secret is masked where the line is written, as for every error), control characters shown
 * escaped, at most EXCERPT_CHARACTERS, `…` when there is more. Empty for an empty or binary body.
 * `bodyStart` may hold more than EXCERPT_BYTES (the whole body): only those are read.
 */
export function excerptOf(bodyStart: Uint8Array | string): string {
  const bytes = typeof bodyStart === "string" ? Buffer.from(bodyStart, "utf8") : bodyStart;
  const more = bytes.length > EXCERPT_BYTES;
  let text = new TextDecoder("utf-8").decode(bytes.subarray(0, EXCERPT_BYTES));
  // A character cut by the byte bound decodes as U+FFFD at the end; one anywhere else means binary.
  if (more) text = text.replace(/\uFFFD+$/, "");
  if (/[\uFFFD\0]/.test(text)) return "";
  // Redacted before it is cut, so a URL's password is never left half shown.
  const line = redactText(text.replace(/\s+/g, " ").trim());
  if (line === "") return "";
  const cut = more || line.length > EXCERPT_CHARACTERS;
  return `${printable(line.slice(0, EXCERPT_CHARACTERS))}${cut ? "…" : ""}`;
}
