import type { MessageType } from "../messages/schemas.js";
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "../json/char-codes.js";

/**
 * What the sending pass needs from a bare message whose line the validation
 * pass found canonical (the line is exactly `JSON.stringify` of its parsed
 * value): its type and its order key, read from the top-level keys without
 * parsing the rest. Pure. A canonical line has no whitespace outside strings,
 * no duplicate keys and only JSON.stringify's escapes, so the first match of a
 * key is the value JSON.parse would give.
 */
export interface ScannedMessage {
  type: MessageType;
  /** userIdOf's answer: `userId`, else an alias's `"User ID"`, else `anonymousId` (strings only). */
  orderKey: string | undefined;
  /** With `all`: the string values of `messageId`, `event` and `timestamp` (results lines, --speed). */
  messageId?: string | undefined;
  event?: string | undefined;
  timestamp?: string | undefined;
}

/**
 * The type and order key of a canonical bare message (with `all`, its messageId, event and
 * timestamp too), or undefined when the text is not one (the caller then parses it).
 */
export function scanMessage(text: string, all = false): ScannedMessage | undefined {
  if (text.charCodeAt(0) !== OPEN_BRACE) return undefined;
  let type: string | undefined;
  let userId: string | undefined;
  let aliasUserId: string | undefined;
  let anonymousId: string | undefined;
  let messageId: string | undefined;
  let event: string | undefined;
  let timestamp: string | undefined;
  let i = 1;
  if (text.charCodeAt(i) === CLOSE_BRACE) return undefined;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0 || text.charCodeAt(keyEnd + 1) !== COLON) return undefined;
    const key = text.slice(i + 1, keyEnd);
    const valueStart = keyEnd + 2;
    const valueEnd = valueEndAt(text, valueStart);
    if (valueEnd < 0) return undefined;
    if (text.charCodeAt(valueStart) === QUOTE) {
      // Only the keys wanted are decoded; their values are short.
      if (key === "type") type = decode(text, valueStart, valueEnd);
      else if (key === "userId") userId = decode(text, valueStart, valueEnd);
      else if (key === "User ID") aliasUserId = decode(text, valueStart, valueEnd);
      else if (key === "anonymousId") anonymousId = decode(text, valueStart, valueEnd);
      else if (all) {
        if (key === "messageId") messageId = decode(text, valueStart, valueEnd);
        else if (key === "event") event = decode(text, valueStart, valueEnd);
        else if (key === "timestamp") timestamp = decode(text, valueStart, valueEnd);
      }
    }
    // userId, when a string, decides the order key: nothing further is needed (unless `all`).
    if (!all && type !== undefined && userId !== undefined) break;
    const next = text.charCodeAt(valueEnd);
    if (next === CLOSE_BRACE) {
      if (valueEnd !== text.length - 1) return undefined;
      break;
    }
    if (next !== COMMA) return undefined;
    i = valueEnd + 1;
  }
  if (type === undefined) return undefined;
  const orderKey = userId ?? aliasUserId ?? anonymousId;
  return all ? { type: type as MessageType, orderKey, messageId, event, timestamp } : { type: type as MessageType, orderKey };
}

/** The index of the quote closing the string that opens at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i += 1;
    else if (c === QUOTE) return i;
  }
  return -1;
}

/** The index just past the value that starts at `start` (a string, an object, an array or a literal), or -1. */
function valueEndAt(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) {
    const end = stringEnd(text, start);
    return end < 0 ? -1 : end + 1;
  }
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = stringEnd(text, i);
        if (i < 0) return -1;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth += 1;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next comma or closing brace.
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === COMMA || c === CLOSE_BRACE) return i === start ? -1 : i;
  }
  return -1;
}

function decode(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes("\\") ? (JSON.parse(text.slice(start, end)) as string) : inner;
}
