/**
 * Pretty-printing with a bound on what it produces. Indentation grows with
 * depth, so a small body can print huge (1 MiB nested 500 deep becomes
 * 500 MB): the size of `JSON.stringify(value, null, 2)` is counted first, in
 * one loop over the value (no recursion), and the text is built only when it fits.
 */

/** The longest pretty text built, in characters: four times the largest body listen accepts. */
export const MAX_PRETTY_CHARS = 4 * 1024 * 1024;

/** `JSON.stringify(value, null, 2)` for a parsed JSON value, or null when that would be over `maxChars`. */
export function prettyJson(value: unknown, maxChars = MAX_PRETTY_CHARS): string | null {
  const compact = JSON.stringify(value) as string | undefined;
  if (compact === undefined) return "";
  if (compact.length > maxChars || compact.length + indentation(value, maxChars - compact.length) > maxChars) return null;
  return JSON.stringify(value, null, 2);
}

/**
 * What two-space indentation adds to the compact form of a value from
 * JSON.parse: for each non-empty array or object at depth d holding k
 * entries, a newline and 2(d+1) spaces before each entry, a newline and 2d
 * spaces before its closing bracket, and for objects a space after each
 * colon. Stops counting once past `limit`.
 */
function indentation(root: unknown, limit: number): number {
  let added = 0;
  // Two parallel stacks rather than one object per pending container.
  const values: object[] = [];
  const depths: number[] = [];
  if (typeof root === "object" && root !== null) {
    values.push(root);
    depths.push(0);
  }
  while (values.length > 0 && added <= limit) {
    const current = values.pop() as object;
    const depth = depths.pop() as number;
    const isArray = Array.isArray(current);
    const entries: unknown[] = isArray ? (current as unknown[]) : Object.values(current);
    if (entries.length === 0) continue;
    added += entries.length * (2 * depth + 3) + 2 * depth + 1 + (isArray ? 0 : entries.length);
    for (const entry of entries) {
      if (typeof entry !== "object" || entry === null) continue;
      values.push(entry);
      depths.push(depth + 1);
    }
  }
  return added;
}
