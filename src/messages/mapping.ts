/**
 * The `data` mapping of the Webhooks (Actions) destination (`--data MAPPING`, the config key
 * `data`): which part of each message becomes the request body. The real destination resolves a
 * mapping with its mapping kit (segmentio/action-destinations, packages/core/src/mapping-kit); this
 * module supports a subset of it and builds `data` exactly as the real one does for that subset.
 *
 * Supported:
 * - a path: `$.` (the whole message, the default), `$.properties`, `$.traits.email`,
 *   `$.products[0].sku`, `$.products.0.sku`, `$.context['library'].name`;
 * - a JSON object whose values are literals (string, number, boolean, null, and arrays and
 *   objects of them) or exactly `{"@path": "<path>"}`, nested in objects and in arrays; a
 *   top-level `{"@path": "<path>"}` is the same as the path alone.
 *
 * Resolved like the real one: a path that finds nothing drops its key (a nested object whose keys
 * all vanished stays `{}`); in an array it gives null; a null found on the way is kept; a `data`
 * that is nothing, null or "" means no data (no body, no signature); a `data` that is not an
 * object (a string, number, boolean or array) is refused for that event, as the real one answers
 * it 400 and sends nothing (in a batch it is left out and the rest are sent).
 *
 * Refused up front, naming the place: every other directive (UNSUPPORTED_DIRECTIVES and any other
 * `@`-key), `_metadata`, `__segment_internal_directive`, `__proto__` (the real one loses that key),
 * `@path` with a value that is not a string, `@path` beside other keys, a path not starting with
 * `$.` (the real one reads `properties.x` as `$.properties.x` and `$` alone as nothing: both are
 * refused to spare the surprise), and a top-level JSON value that is not an object (the real one
 * would refuse every event).
 */
import { ConfigError, UsageError, type ErrorSource } from "../errors.js";
import { parseUntrustedJson, isPlainObject } from "../json/parse.js";
import { followPath, splitPath } from "./mapping-path.js";

/** The real mapping kit's other directives: none of them is supported by `--data`. */
export const UNSUPPORTED_DIRECTIVES: readonly string[] = [
  "@if",
  "@case",
  "@replace",
  "@arrayPath",
  "@template",
  "@literal",
  "@flatten",
  "@json",
  "@merge",
  "@transform",
  "@excludeWhenNull",
  "@liquid",
];

/** Keys the real mapping kit reads itself, refused wherever they appear in `--data`. */
const RESERVED_KEYS: ReadonlyMap<string, string> = new Map([
  ["_metadata", "the real mapping kit keeps it for a directive's metadata"],
  ["__segment_internal_directive", "the real mapping kit keeps it for its root directive"],
  ["__proto__", "the real destination silently loses this key"],
]);

// Deeper than any mapping a person writes, and shallow enough to walk recursively.
const MAX_MAPPING_DEPTH = 512;

/** One part of a parsed mapping. */
export type MappingNode =
  | { readonly kind: "path"; readonly path: string; readonly keys: readonly string[] }
  | { readonly kind: "literal"; readonly value: unknown }
  | { readonly kind: "object"; readonly entries: readonly (readonly [string, MappingNode])[] }
  | { readonly kind: "array"; readonly items: readonly MappingNode[] };

/** A mapping checked against the subset, ready to resolve against many messages. */
export interface Mapping {
  /** The mapping as the real destination writes it: a path becomes `{"@path": path}`. */
  readonly spec: unknown;
  readonly root: MappingNode;
}

/** What one message's `data` is. */
export type ResolvedData =
  /** A body to send: `JSON.stringify(data)`. Shares values with the message: do not modify it. */
  | { readonly kind: "data"; readonly data: Readonly<Record<string, unknown>> }
  /** No data: no body, no Content-Type, no signature (in a batch: a `null` element). */
  | { readonly kind: "none" }
  /** The real destination answers 400 for this event and sends nothing (in a batch: left out). */
  | { readonly kind: "refused"; readonly reason: string };

/** The default mapping, `{"@path": "$."}`: the whole message. */
export const DEFAULT_MAPPING: Mapping = Object.freeze({
  spec: Object.freeze({ "@path": "$." }),
  root: Object.freeze({ kind: "path", path: "$.", keys: Object.freeze([]) }),
});

/**
 * Parses MAPPING text: a path (`$.properties`) or a JSON object (see the module comment). Throws
 * a UsageError naming `source`, or a ConfigError when `source` names a config file or key.
 */
export function parseMapping(text: string, source: ErrorSource): Mapping {
  const trimmed = text.trim();
  if (trimmed.startsWith("$")) return pathMapping(trimmed, source);
  if (trimmed.startsWith("{")) {
    let value: unknown;
    try {
      value = parseUntrustedJson(trimmed);
    } catch (error) {
      throw refusal(`not valid JSON: ${(error as Error).message}`, source);
    }
    return mappingFromValue(value, source);
  }
  let value: unknown;
  try {
    value = parseUntrustedJson(trimmed);
  } catch {
    throw refusal(`${JSON.stringify(text)} is neither a path starting with "$." (such as "$.properties") nor a JSON object`, source);
  }
  throw notAMapping(value, source);
}

/** A mapping given as a value (a config file's `data`): a path string, JSON text, or an object. */
export function mappingFromValue(value: unknown, source: ErrorSource): Mapping {
  if (typeof value === "string") return parseMapping(value, source);
  if (!isPlainObject(value)) throw notAMapping(value, source);
  const root = parseNode(value, [], source);
  return { spec: JSON.parse(JSON.stringify(value)) as unknown, root };
}

/** The mapping as a user would write it: the path, or the JSON object. */
export function mappingText(mapping: Mapping): string {
  return mapping.root.kind === "path" ? mapping.root.path : JSON.stringify(mapping.spec);
}

/** Builds one message's `data` as the real destination does (see ResolvedData). */
export function resolveMapping(mapping: Mapping, message: unknown): ResolvedData {
  // The real mapping kit throws on a non-object event before resolving anything.
  if (!isPlainObject(message)) return { kind: "refused", reason: `data must be an object, got ${realType(message)}` };
  const data = resolveNode(mapping.root, message);
  // A root-level null or "" is removed before validation, as nothing is (removeEmptyValues).
  if (data === undefined || data === null || data === "") return { kind: "none" };
  if (isPlainObject(data)) return { kind: "data", data };
  // The real one's message, from its schema validation of the field `data`.
  return { kind: "refused", reason: `Data must be an object but it was ${Array.isArray(data) ? "an array" : `${article(typeof data)} ${typeof data}`}.` };
}

function resolveNode(node: MappingNode, message: Record<string, unknown>): unknown {
  switch (node.kind) {
    case "path":
      return followPath(message, node.keys);
    case "literal":
      return node.value;
    case "object": {
      const resolved: Record<string, unknown> = {};
      for (const [key, child] of node.entries) {
        const value = resolveNode(child, message);
        if (value !== undefined) resolved[key] = value;
      }
      return resolved;
    }
    case "array":
      // The real one keeps an undefined item, which JSON writes as null: null here directly.
      return node.items.map((child) => resolveNode(child, message) ?? null);
  }
}

function pathMapping(path: string, source: ErrorSource): Mapping {
  const node = pathNode(path, [], source);
  return { spec: { "@path": path }, root: node };
}

function pathNode(path: string, at: readonly string[], source: ErrorSource): MappingNode {
  if (!path.startsWith("$.")) {
    const hint = path === "$" ? `"$" alone finds nothing in the real destination; the whole message is "$."` : `write "$.${path.replace(/^\$/, "")}"`;
    throw refusal(`${place(at)}the path ${JSON.stringify(path)} does not start with "$.": ${hint}`, source);
  }
  return { kind: "path", path, keys: splitPath(path.slice(2)) };
}

function parseNode(value: unknown, at: readonly string[], source: ErrorSource): MappingNode {
  if (at.length > MAX_MAPPING_DEPTH) throw refusal(`the mapping is nested deeper than ${MAX_MAPPING_DEPTH} levels`, source);
  if (value === null || typeof value === "string" || typeof value === "boolean") return { kind: "literal", value };
  if (typeof value === "number") {
    if (Number.isFinite(value)) return { kind: "literal", value };
    throw refusal(`${place(at)}${String(value)} is not a JSON number`, source);
  }
  if (Array.isArray(value)) {
    const items = value.map((item, index) => parseNode(item, [...at, String(index)], source));
    return allLiteral(items) ? { kind: "literal", value: Object.freeze(items.map(literalOf)) } : { kind: "array", items };
  }
  if (!isPlainObject(value)) throw refusal(`${place(at)}${describeType(value)} is not a JSON value`, source);
  const keys = Object.keys(value);
  if (keys.some((key) => key.startsWith("@"))) return directiveNode(value, keys, at, source);
  const entries: (readonly [string, MappingNode])[] = [];
  for (const key of keys) {
    const reserved = RESERVED_KEYS.get(key);
    if (reserved !== undefined) throw refusal(`${place([...at, key])}the key "${key}" is not supported: ${reserved}`, source);
    entries.push([key, parseNode(value[key], [...at, key], source)]);
  }
  if (!allLiteral(entries.map(([, node]) => node))) return { kind: "object", entries };
  const literal: Record<string, unknown> = {};
  for (const [key, node] of entries) literal[key] = literalOf(node);
  return { kind: "literal", value: Object.freeze(literal) };
}

function directiveNode(value: Record<string, unknown>, keys: readonly string[], at: readonly string[], source: ErrorSource): MappingNode {
  const path = value["@path"];
  if (keys.length === 1 && keys[0] === "@path") {
    if (typeof path === "string") return pathNode(path, at, source);
    const nested = isPlainObject(path) && Object.keys(path).some((key) => key.startsWith("@"));
    throw refusal(`${place(at)}"@path" takes a path string such as "$.properties", not ${nested ? "a directive" : describeType(path)}`, source);
  }
  if (keys.includes("@path")) {
    const others = keys
      .filter((key) => key !== "@path")
      .map((key) => `"${key}"`)
      .join(", ");
    throw refusal(`${place(at)}{"@path": …} must be alone in its object, but it has ${others} beside it`, source);
  }
  const directive = keys.find((key) => key.startsWith("@")) ?? "";
  const what = UNSUPPORTED_DIRECTIVES.includes(directive)
    ? `the directive ${directive} of the real mapping kit is not supported`
    : `"${directive}" is not a supported directive (a key starting with @ is a directive)`;
  throw refusal(`${place(at)}${what}; --data takes literals and {"@path": "$.…"} only`, source);
}

function allLiteral(nodes: readonly MappingNode[]): boolean {
  return nodes.every((node) => node.kind === "literal");
}

function literalOf(node: MappingNode): unknown {
  return node.kind === "literal" ? node.value : undefined;
}

// Where in the mapping, as a JSON pointer (the real validator's style): `at /user/email: `.
function place(at: readonly string[]): string {
  return at.length === 0 ? "" : `at /${at.map((key) => key.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}: `;
}

// A top-level value that is not a path or an object: every event would get no data or a 400.
function notAMapping(value: unknown, source: ErrorSource): UsageError | ConfigError {
  const outcome =
    value === null || value === "" ? "it would send no data for any event" : "the real destination would refuse every event, as data must be an object";
  const unquote = typeof value === "string" && value.startsWith("$") ? `; write the path without JSON quotes: ${value}` : "";
  return refusal(`${describeType(value)} is not a mapping: give a path such as "$.properties" or a JSON object (${outcome})${unquote}`, source);
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a JSON array";
  if (typeof value === "string") return `the JSON string ${JSON.stringify(value)}`;
  if (typeof value === "number" || typeof value === "boolean") return `${article(typeof value)} ${typeof value} (${String(value)})`;
  return `${article(typeof value)} ${typeof value}`;
}

function realType(value: unknown): string {
  return Object.prototype.toString.call(value).slice(8, -1).toLowerCase();
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? "an" : "a";
}

function refusal(message: string, source: ErrorSource): UsageError | ConfigError {
  return source.file !== undefined || source.key !== undefined ? new ConfigError(message, source) : new UsageError(message, source);
}
