/**
 * Nesting limit for every JSON document read from outside (request bodies,
 * input files, flags). JSON.parse is iterative in V8, but JSON.stringify and
 * any walk over the value recurse, so a deeply nested value would overflow
 * the stack later; refusing it here keeps every later step safe.
 */
export const MAX_JSON_DEPTH = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when the JSON text (a string or its UTF-8 bytes) nests arrays and
 * objects deeper than `limit`. One loop, no recursion; string contents are
 * skipped (UTF-8 continuation bytes never equal an ASCII delimiter).
 */
export function jsonTooDeep(text: string | Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  const at: (i: number) => number = typeof text === "string" ? (i) => text.charCodeAt(i) : (i) => text[i] as number;
  const length = text.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === QUOTE) {
      i = stringEnd(text, at, i + 1, length);
    }
  }
  return false;
}

/** The index of the closing quote of a string whose content starts at `i` (or the end). */
function stringEnd(text: string | Uint8Array, at: (i: number) => number, i: number, length: number): number {
  if (typeof text === "string") {
    // indexOf jumps over long strings quickly; a quote preceded by an odd run of backslashes is escaped.
    for (;;) {
      const quote = text.indexOf('"', i);
      if (quote === -1) return length;
      let slashes = 0;
      while (quote - 1 - slashes >= i && text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes++;
      if (slashes % 2 === 0) return quote;
      i = quote + 1;
    }
  }
  for (; i < length; i++) {
    const c = at(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return length;
}

export class JsonDepthError extends SyntaxError {
  constructor(readonly limit: number) {
    super(`nested deeper than ${limit} levels`);
    this.name = "SyntaxError";
  }
}

/**
 * JSON.parse with the nesting limit: the one way untrusted JSON is read.
 * Throws a SyntaxError (as JSON.parse does) for bad or too deeply nested text.
 */
export function parseJson(text: string, limit = MAX_JSON_DEPTH): unknown {
  if (jsonTooDeep(text, limit)) throw new JsonDepthError(limit);
  return JSON.parse(text) as unknown;
}
