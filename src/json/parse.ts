import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "./char-codes.js";

/* JSON from outside (request bodies, files, flags): parsed within a nesting bound, and an object told from arrays and null. */

/**
 * Nesting limit for every JSON document read from outside (request bodies,
 * input files, flags). JSON.parse is iterative in V8, but JSON.stringify and
 * any walk over the value recurse, so a deeply nested value would overflow
 * the stack later; refusing it here keeps every later step safe.
 */
const MAX_JSON_DEPTH = 512;

/**
 * True when the JSON text nests arrays and objects deeper than `limit`. One
 * loop, no recursion; string contents are skipped. Text no longer than the
 * limit cannot exceed it, so most messages are not scanned.
 */
export function jsonTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  if (text.length <= limit) return false;
  const length = text.length;
  let depth = 0;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < length; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

class JsonDepthError extends SyntaxError {
  constructor(readonly limit: number) {
    super(`nested deeper than ${limit} levels`);
    this.name = "SyntaxError";
  }
}

/**
 * JSON.parse with the nesting limit: the one way untrusted JSON is read.
 * Throws a SyntaxError (as JSON.parse does) for bad or too deeply nested text.
 */
export function parseUntrustedJson(text: string, limit = MAX_JSON_DEPTH): unknown {
  if (jsonTooDeep(text, limit)) throw new JsonDepthError(limit);
  return JSON.parse(text) as unknown;
}

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
