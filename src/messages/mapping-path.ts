/**
 * The `@path` lookup of the real Webhooks (Actions) destination: its mapping kit strips the first
 * `$.` and hands the rest to its own `get` (packages/core/src/get.ts at
 * segmentio/action-destinations@7451efe). The split and the step rule below are that code's, so a
 * path finds the same value here as there. docs: /work/notes/actions-research.md section 4.
 */

// The real `get`'s splitter: `.`, a `[` before a digit or quote, and `]`s after a digit or quote.
// A `[` before anything else is part of the key (`a[b]` is the key "a[b]").
const SEPARATORS = /\[(?="|'|\d)|\.|(?<="|'|\d)]+/g;

/**
 * The keys of a path written after `$.`: `properties.products[1].sku`, `products.0.sku` and
 * `context['library'].name` all work. Empty pieces are skipped and every quote is removed from a
 * piece, as the real one does, so `""` and `"."` are the root (no keys).
 */
export function splitPath(rest: string): string[] {
  return rest
    .split(SEPARATORS)
    .filter((piece) => piece !== "")
    .map((piece) => piece.replace(/'|"/g, ""));
}

/**
 * Follows `keys` from `root` with the real step rule `value && value[key]`: a falsy value on the
 * way (0, "", false, null) is the answer as it is, so `$.properties.zero.deeper` gives 0 and a
 * null coupon's `.code` gives null; a missing key gives undefined. Strings and arrays have their
 * own `length` and indexes (`$.event.length` is the event name's length).
 *
 * Only own properties are read. The real one also reads inherited ones (`constructor`,
 * `toString`, `__proto__`), which give a function (serialized like a missing key, except as the
 * whole `data`) or the object prototype (serialized `{}`); here they are missing.
 */
export function followPath(root: unknown, keys: readonly string[]): unknown {
  let value = root;
  for (const key of keys) {
    if (!value) return value;
    value = ownProperty(value, key);
  }
  return value;
}

function ownProperty(value: unknown, key: string): unknown {
  if ((typeof value === "object" || typeof value === "string") && Object.hasOwn(value as object, key)) {
    return (value as Record<string, unknown>)[key];
  }
  return undefined;
}
