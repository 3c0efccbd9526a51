import type { CallType } from "../messages/schemas.js";

/**
 * serve's route table, pure: a method and request-target in, what the request
 * is out. Every official client's paths (docs/serve-api.md#endpoints): the
 * browser's short paths, the mobile clients' `/v1/b`, Java's `/v1/import/`,
 * the settings the browser and mobile clients fetch at start, and preflights.
 * Linear in the path's length whatever it holds.
 */

/** What a path is. `label` is one of a fixed set (never the path as sent), so counts by route stay bounded. */
export type Route =
  | { kind: "single"; type: CallType; label: string }
  | { kind: "batch"; label: string }
  | { kind: "delete"; label: string }
  /** The browser library's own metrics (and the mobile clients' telemetry): answered 200, counted, discarded. */
  | { kind: "metrics"; label: string }
  /** The settings the browser library (via `cdnURL`) and the mobile clients (via `cdnHost`) fetch at start. */
  | { kind: "settings"; writeKey: string; label: string }
  | { kind: "health"; label: string }
  /** A source function's webhook: `POST /functions/NAME` (docs/serve-api.md#source-functions). */
  | { kind: "function"; name: string; label: string };

export type Routing =
  | { kind: "route"; route: Route }
  /** OPTIONS on a known path: answer the CORS preflight (src/serve/cors.ts) with `methods`. */
  | { kind: "preflight"; route: Route; methods: readonly string[] }
  /** A known path with another method: 405 with `Allow: methods`. */
  | { kind: "wrong_method"; route: Route; methods: readonly string[] }
  | { kind: "not_found"; path: string };

const POST = ["POST"] as const;
const GET = ["GET", "HEAD"] as const;

const single = (type: CallType, path: string): Route => ({ kind: "single", type, label: path });

/** The paths under /v1/ with no parameter, keyed by what follows /v1/ (a table: every path written out, so a search finds it). */
const FIXED: ReadonlyMap<string, Route> = new Map([
  ["batch", { kind: "batch", label: "/v1/batch" }],
  ["import", { kind: "batch", label: "/v1/import" }],
  ["b", { kind: "batch", label: "/v1/b" }],
  ["identify", single("identify", "/v1/identify")],
  ["track", single("track", "/v1/track")],
  ["page", single("page", "/v1/page")],
  ["screen", single("screen", "/v1/screen")],
  ["group", single("group", "/v1/group")],
  ["alias", single("alias", "/v1/alias")],
  // analytics.js ≥ 1.x posts each call to the first letter of its type.
  ["i", single("identify", "/v1/i")],
  ["t", single("track", "/v1/t")],
  ["p", single("page", "/v1/p")],
  ["s", single("screen", "/v1/s")],
  ["g", single("group", "/v1/g")],
  ["a", single("alias", "/v1/a")],
  ["delete", { kind: "delete", label: "/v1/delete" }],
  ["m", { kind: "metrics", label: "/v1/m" }],
] satisfies [string, Route][]);

const HEALTH: Route = { kind: "health", label: "/health" };
const SETTINGS_LABEL = "/v1/projects/{writeKey}/settings";
const BARE_SETTINGS_LABEL = "/projects/{writeKey}/settings";

/** The methods a route takes (besides OPTIONS, the preflight). */
export function methodsOf(route: Route): readonly string[] {
  return route.kind === "settings" || route.kind === "health" ? GET : POST;
}

/** Routes one request: `target` is the request-target as received (a query string is ignored). */
export function routeRequest(method: string, target: string): Routing {
  const path = normalizePath(target);
  const route = routeFor(path);
  if (route === undefined) return { kind: "not_found", path };
  const methods = methodsOf(route);
  if (method === "OPTIONS") return { kind: "preflight", route, methods };
  if (!methods.includes(method)) return { kind: "wrong_method", route, methods };
  return { kind: "route", route };
}

/** What a path is, or undefined; `path` as `normalizePath` gives it. */
export function routeFor(path: string): Route | undefined {
  if (path === "/health") return HEALTH;
  if (path.startsWith(FUNCTIONS_PREFIX)) return functionRoute(path.slice(FUNCTIONS_PREFIX.length));
  if (path.startsWith("/v1/")) {
    const rest = path.slice(4);
    return FIXED.get(rest) ?? settingsRoute(rest, SETTINGS_LABEL);
  }
  // analytics-kotlin/-swift given a cdnHost without /v1 ask here; a 404 would send Kotlin back to the real API's host.
  return settingsRoute(path.slice(1), BARE_SETTINGS_LABEL);
}

const FUNCTIONS_PREFIX = "/functions/";
const FUNCTION_LABEL = "/functions/{name}";

/** `/functions/NAME`: one non-empty segment, percent-decoded when it decodes. */
function functionRoute(rest: string): Route | undefined {
  if (rest === "" || rest.includes("/")) return undefined;
  return { kind: "function", name: decodeSegment(rest), label: FUNCTION_LABEL };
}

/** `projects/{writeKey}/settings`: the write key is one non-empty segment, percent-decoded when it decodes. */
function settingsRoute(rest: string, label: string): Route | undefined {
  const prefix = "projects/";
  const suffix = "/settings";
  if (!rest.startsWith(prefix) || !rest.endsWith(suffix) || rest.length <= prefix.length + suffix.length) return undefined;
  const segment = rest.slice(prefix.length, rest.length - suffix.length);
  if (segment.includes("/")) return undefined;
  return { kind: "settings", writeKey: decodeSegment(segment), label };
}

function decodeSegment(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The path of a request-target: the query string cut off, runs of slashes
 * made one and trailing slashes dropped (a client given `host/v1/` as its
 * host posts to `/v1//b`; Java posts to `/v1/import/`). One pass by hand:
 * `/\/+$/` retries every slash of a long run (quadratic in a 16 KB
 * request line).
 */
export function normalizePath(target: string): string {
  const query = target.indexOf("?");
  const end = query === -1 ? target.length : query;
  let out = "";
  let from = 0;
  let previousSlash = false;
  for (let i = 0; i < end; i++) {
    const slash = target.charCodeAt(i) === SLASH;
    if (slash && previousSlash) {
      out += target.slice(from, i);
      from = i + 1;
    }
    previousSlash = slash;
  }
  out += target.slice(from, end);
  return out.length > 1 && out.endsWith("/") ? out.slice(0, -1) : out;
}

const SLASH = 0x2f;
