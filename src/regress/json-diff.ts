import { isPlainObject } from "../json/parse.js";
import { segmentMatches, type JsonPath, type PathSegment } from "./jsonpath.js";

/**
 * Structural comparison of two parsed JSON values: object key order ignored,
 * arrays by position, `ignore` paths skipped with all beneath them. Iterative
 * (an explicit stack and parent-linked paths), because bodies come from
 * receivers: a deeply nested answer cannot overflow the call stack, and the
 * cost stays linear in the size of the values.
 */

/** Marks a key or item present on one side only. */
export const ABSENT: unique symbol = Symbol("absent");
export type Side = unknown | typeof ABSENT;

export interface JsonDifference {
  path: (string | number)[];
  before: Side;
  after: Side;
}

export interface JsonDiff {
  /** The first `limit` differences, in document order of the old value. */
  differences: JsonDifference[];
  /** All differences found. */
  total: number;
}

interface PathNode {
  parent: PathNode | undefined;
  step: string | number;
}

interface Pending {
  before: unknown;
  after: unknown;
  node: PathNode | undefined;
  depth: number;
  /** Indices of the ignore patterns whose leading segments match this path. */
  alive: readonly number[];
}

const NONE: readonly number[] = [];

export function diffJson(before: unknown, after: unknown, options: { ignore?: readonly JsonPath[] | undefined; limit?: number | undefined } = {}): JsonDiff {
  const patterns = options.ignore ?? [];
  const limit = options.limit ?? 10;
  const result: JsonDiff = { differences: [], total: 0 };
  const rootAlive = patterns.map((_, index) => index);
  if (rootAlive.some((index) => (patterns[index] as JsonPath).segments.length === 0)) return result;
  const stack: Pending[] = [{ before, after, node: undefined, depth: 0, alive: rootAlive.length > 0 ? rootAlive : NONE }];

  const report = (node: PathNode | undefined, a: Side, b: Side): void => {
    result.total += 1;
    if (result.differences.length < limit) result.differences.push({ path: pathOf(node), before: a, after: b });
  };
  const visit = (parent: Pending, step: string | number, a: Side, b: Side): void => {
    const depth = parent.depth + 1;
    let alive = NONE;
    if (parent.alive.length > 0) {
      const next: number[] = [];
      for (const index of parent.alive) {
        const segments = (patterns[index] as JsonPath).segments;
        if (!segmentMatches(segments[depth - 1] as PathSegment, step)) continue;
        if (segments.length === depth) return; // ignored, with everything beneath
        next.push(index);
      }
      alive = next;
    }
    stack.push({ before: a, after: b, node: { parent: parent.node, step }, depth, alive });
  };

  // Children are pushed in reverse so they are compared (and reported) in document order.
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { before: a, after: b } = item;
    if (a === ABSENT || b === ABSENT) {
      report(item.node, a, b);
    } else if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = Math.max(a.length, b.length) - 1; i >= 0; i--) visit(item, i, i < a.length ? a[i] : ABSENT, i < b.length ? b[i] : ABSENT);
    } else if (isPlainObject(a) && isPlainObject(b)) {
      const added = Object.keys(b).filter((key) => !Object.hasOwn(a, key));
      for (let i = added.length - 1; i >= 0; i--) visit(item, added[i] as string, ABSENT, b[added[i] as string]);
      const keys = Object.keys(a);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        visit(item, key, a[key], Object.hasOwn(b, key) ? b[key] : ABSENT);
      }
    } else if (a !== b) {
      // Primitives that differ, or containers of different kinds (object vs array), differ as a whole.
      report(item.node, a, b);
    }
  }
  return result;
}

function pathOf(node: PathNode | undefined): (string | number)[] {
  const steps: (string | number)[] = [];
  for (let at = node; at !== undefined; at = at.parent) steps.push(at.step);
  return steps.reverse();
}
