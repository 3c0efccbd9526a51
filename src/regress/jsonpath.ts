import { UsageError } from "../errors.js";

/**
 * The small JSONPath subset of `--ignore`: `$`, `.key`, `['key']` / `["key"]`,
 * `[n]`, `[*]` (and `.*`). A path names a node; ignoring it ignores everything
 * beneath it too.
 */
export type PathSegment = { key: string } | { index: number } | { any: true };

export interface JsonPath {
  text: string;
  segments: PathSegment[];
}

const SUPPORTED = "supported: $, .key, ['key'], [n], [*]";
const IDENTIFIER = /^[^.[\]'"\s]+/;

export function parseJsonPath(text: string, field = "ignore"): JsonPath {
  const invalid = (why: string): UsageError => new UsageError(`invalid path "${text}": ${why} (${SUPPORTED})`, { field });
  if (!text.startsWith("$")) throw invalid("it must start with $");
  const segments: PathSegment[] = [];
  let at = 1;
  while (at < text.length) {
    const rest = text.slice(at);
    if (rest.startsWith(".*")) {
      segments.push({ any: true });
      at += 2;
    } else if (rest.startsWith(".")) {
      const key = IDENTIFIER.exec(rest.slice(1))?.[0];
      if (key === undefined) throw invalid(`expected a key after "." at character ${at + 1}`);
      segments.push({ key });
      at += 1 + key.length;
    } else if (rest.startsWith("[")) {
      const bracket = parseBracket(rest);
      if (bracket === undefined) throw invalid(`unreadable [...] at character ${at + 1}`);
      segments.push(bracket.segment);
      at += bracket.length;
    } else {
      throw invalid(`unexpected "${rest[0]}" at character ${at + 1}`);
    }
  }
  return { text, segments };
}

/** `[*]`, `[12]`, `['key']` or `["key"]` (with \\ escapes) at the start of `rest`. */
function parseBracket(rest: string): { segment: PathSegment; length: number } | undefined {
  const simple = /^\[(\*|\d+)\]/.exec(rest);
  if (simple) {
    const inner = simple[1] as string;
    if (inner === "*") return { segment: { any: true }, length: simple[0].length };
    const index = Number(inner);
    return Number.isSafeInteger(index) ? { segment: { index }, length: simple[0].length } : undefined;
  }
  const quote = rest[1];
  if (quote !== "'" && quote !== '"') return undefined;
  let key = "";
  for (let i = 2; i < rest.length; i++) {
    const char = rest[i] as string;
    if (char === "\\" && i + 1 < rest.length) {
      key += rest[i + 1];
      i += 1;
    } else if (char === quote) {
      return rest[i + 1] === "]" ? { segment: { key }, length: i + 2 } : undefined;
    } else {
      key += char;
    }
  }
  return undefined;
}

/** Whether a concrete segment (object key or array index) matches a pattern segment. */
export function segmentMatches(pattern: PathSegment, step: string | number): boolean {
  if ("any" in pattern) return true;
  if ("index" in pattern) return typeof step === "number" && step === pattern.index;
  return typeof step === "string" && step === pattern.key;
}

/** `$.a['b c'][3]` for a concrete path. */
export function formatPath(steps: readonly (string | number)[]): string {
  let out = "$";
  for (const step of steps) {
    if (typeof step === "number") out += `[${step}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(step)) out += `.${step}`;
    else out += `['${step.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}']`;
  }
  return out;
}
