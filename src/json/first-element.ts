import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "./char-codes.js";

/**
 * Where element 0 of a JSON array body stands in the raw bytes, for the Webhooks (Actions) batch
 * signature: the real destination signs `JSON.stringify` of the first element only, which is
 * exactly these bytes of a compact body. Taken from the raw bytes, never re-serialized, so a
 * receiver checks what was sent, whatever its spacing.
 */
export interface ByteSpan {
  /** Index of the element's first byte. */
  start: number;
  /** Index just after its last byte: `raw.subarray(start, end)`. */
  end: number;
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/** True when the first byte that is not JSON whitespace is `[`: cheap, and says nothing of the rest. */
export function isJsonArrayBody(raw: Uint8Array): boolean {
  const i = skipWhitespace(raw, 0);
  return i < raw.length && raw[i] === OPEN_BRACKET;
}

// Scanner states: what the next token may be.
const VALUE = 0; // a value
const VALUE_OR_CLOSE = 1; // a value or `]` (just after `[`)
const KEY_OR_CLOSE = 2; // a key or `}` (just after `{`)
const KEY = 3; // a key (after `,` in an object)
const COLON_NEXT = 4; // `:` after a key
const AFTER_VALUE = 5; // `,` or the closing bracket of the innermost container

const IN_ARRAY = 0;
const IN_OBJECT = 1;

/**
 * The span of element 0 when `raw` is a whole, valid JSON array with at least one element (JSON
 * whitespace around and between tokens allowed); null otherwise: not an array, `[]`, or any
 * invalid or truncated JSON anywhere in the body. Never throws.
 *
 * An element 0 of `null` gets its span too (the 4 bytes `null`): the caller decides; the real
 * destination sends no signature when the first element is null.
 *
 * One pass over the bytes, no values built, no recursion: the open containers are kept in a byte
 * stack, so 100,000 levels of nesting cost 100 KB, never the call stack. Bytes of 0x80 and above
 * are accepted in strings as they are (UTF-8 is not checked: the caller decodes the body anyway).
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: one scanner loop over the bytes, its states side by side; position, depth, stack and span stay in locals on this hot path
export function firstElementBytes(raw: Uint8Array): ByteSpan | null {
  const length = raw.length;
  let i = skipWhitespace(raw, 0);
  if (i >= length || raw[i] !== OPEN_BRACKET) return null;
  let stack: Uint8Array = new Uint8Array(64);
  let depth = 1;
  stack[0] = IN_ARRAY;
  let state = VALUE_OR_CLOSE;
  let start = -1;
  let end = -1;
  i++;
  while (i < length) {
    const c = raw[i] as number;
    if (c === SPACE || c === LF || c === CR || c === TAB) {
      i++;
      continue;
    }
    if (state === COLON_NEXT) {
      if (c !== COLON) return null;
      state = VALUE;
      i++;
      continue;
    }
    if (state === AFTER_VALUE) {
      const inner = stack[depth - 1];
      if (c === COMMA) state = inner === IN_ARRAY ? VALUE : KEY;
      else if ((c === CLOSE_BRACKET && inner === IN_ARRAY) || (c === CLOSE_BRACE && inner === IN_OBJECT)) {
        depth--;
        i++;
        if (depth === 0) return skipWhitespace(raw, i) === length && start >= 0 ? { start, end } : null;
        if (depth === 1 && end < 0) end = i;
        continue;
      } else return null;
      i++;
      continue;
    }
    if (state === KEY || state === KEY_OR_CLOSE) {
      if (c === CLOSE_BRACE && state === KEY_OR_CLOSE) {
        depth--;
        i++;
        if (depth === 1 && end < 0) end = i;
        state = AFTER_VALUE;
        continue;
      }
      if (c !== QUOTE) return null;
      i = skipString(raw, i);
      if (i < 0) return null;
      state = COLON_NEXT;
      continue;
    }
    // VALUE or VALUE_OR_CLOSE.
    if (c === CLOSE_BRACKET && state === VALUE_OR_CLOSE) {
      depth--;
      i++;
      if (depth === 0) return null; // `[]`: no element 0.
      if (depth === 1 && end < 0) end = i;
      state = AFTER_VALUE;
      continue;
    }
    if (depth === 1 && start < 0) start = i;
    if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (depth === stack.length) stack = grow(stack);
      stack[depth++] = c === OPEN_BRACKET ? IN_ARRAY : IN_OBJECT;
      state = c === OPEN_BRACKET ? VALUE_OR_CLOSE : KEY_OR_CLOSE;
      i++;
      continue;
    }
    if (c === QUOTE) i = skipString(raw, i);
    else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) i = skipNumber(raw, i);
    else i = skipWord(raw, i);
    if (i < 0) return null;
    if (depth === 1 && end < 0) end = i;
    state = AFTER_VALUE;
  }
  return null; // Truncated: a container is still open.
}

function skipWhitespace(raw: Uint8Array, from: number): number {
  let i = from;
  while (i < raw.length) {
    const c = raw[i];
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
    i++;
  }
  return i;
}

function grow(stack: Uint8Array): Uint8Array {
  const bigger = new Uint8Array(stack.length * 2);
  bigger.set(stack);
  return bigger;
}

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const LOWER_U = 0x75;
// The one-character escapes JSON allows after a backslash: " \ / b f n r t.
const SIMPLE_ESCAPES = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/** Index after the string that opens at `from`, or -1 when it is unterminated or invalid. */
function skipString(raw: Uint8Array, from: number): number {
  const length = raw.length;
  for (let i = from + 1; i < length; i++) {
    const c = raw[i] as number;
    if (c === QUOTE) return i + 1;
    if (c < SPACE) return -1; // A raw control character is not allowed in a JSON string.
    if (c === BACKSLASH) {
      const e = raw[++i];
      if (e === LOWER_U) {
        for (let k = 0; k < 4; k++) if (!isHex(raw[++i])) return -1;
      } else if (e === undefined || !SIMPLE_ESCAPES.has(e)) return -1;
    }
  }
  return -1;
}

/** Index after the number that starts at `from` (JSON's grammar exactly), or -1. */
function skipNumber(raw: Uint8Array, from: number): number {
  let i = from;
  if (raw[i] === MINUS) i++;
  if (raw[i] === DIGIT_0) i++;
  else if (isDigit(raw[i])) while (isDigit(raw[i])) i++;
  else return -1;
  if (raw[i] === DOT) {
    i++;
    if (!isDigit(raw[i])) return -1;
    while (isDigit(raw[i])) i++;
  }
  if (raw[i] === LOWER_E || raw[i] === UPPER_E) {
    i++;
    if (raw[i] === PLUS || raw[i] === MINUS) i++;
    if (!isDigit(raw[i])) return -1;
    while (isDigit(raw[i])) i++;
  }
  return i;
}

const WORDS = [Buffer.from("true"), Buffer.from("false"), Buffer.from("null")];

/** Index after `true`, `false` or `null` at `from`, or -1. */
function skipWord(raw: Uint8Array, from: number): number {
  for (const word of WORDS) {
    if (raw[from] !== word[0] || from + word.length > raw.length) continue;
    let k = 1;
    while (k < word.length && raw[from + k] === word[k]) k++;
    if (k === word.length) return from + k;
  }
  return -1;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= DIGIT_0 && c <= DIGIT_9;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= DIGIT_0 && c <= DIGIT_9) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}
