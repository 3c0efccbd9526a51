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
  /** With `all` or `messageId`: the string value of `messageId`. */
  messageId?: string | undefined;
  /** With `all`: the string values of `event` and `timestamp` (results lines, --speed). */
  event?: string | undefined;
  timestamp?: string | undefined;
}

/** What a scan reads besides the type and order key: nothing, the messageId, or also the event and timestamp. */
export type ScanWants = "none" | "messageId" | "all";

// A canonical line without this text has no messageId key at any depth (JSON.stringify escapes no
// letter). Searched without its quotes: V8's search skips ahead on the first character, and `"`
// is everywhere in JSON while `m` is not (about 4x faster on a 480-byte line).
const MESSAGE_ID = "messageId";

/**
 * The type and order key of a canonical bare message, or undefined when the text is not one (the
 * caller then parses it). With `messageId`, that too (a scheme's message id is derived from it): the
 * scan stops at the first key that settles all three, and a line with no messageId is not walked
 * past its userId. With `all`, its messageId, event and timestamp too.
 */
export function scanMessage(text: string, wants: ScanWants = "none"): ScannedMessage | undefined {
  if (text.charCodeAt(0) !== OPEN_BRACE) return undefined;
  const all = wants === "all";
  // One indexOf instead of walking every key to the end to learn that there is none.
  const wantsId = all || (wants === "messageId" && text.includes(MESSAGE_ID));
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
      else if (wantsId && key === "messageId") messageId = decode(text, valueStart, valueEnd);
      else if (all) {
        if (key === "event") event = decode(text, valueStart, valueEnd);
        else if (key === "timestamp") timestamp = decode(text, valueStart, valueEnd);
      }
    }
    // userId, when a string, decides the order key: nothing further is needed (unless `all`, or a
    // messageId the line holds and the scan has not reached yet).
    if (!all && type !== undefined && userId !== undefined && (!wantsId || messageId !== undefined)) break;
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
  if (all) return { type: type as MessageType, orderKey, messageId, event, timestamp };
  return wants === "messageId" ? { type: type as MessageType, orderKey, messageId } : { type: type as MessageType, orderKey };
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
