import type { IncomingHttpHeaders } from "node:http";

/**
 * serve's CORS answers, pure. Pages post events cross-origin (analytics.js
 * runs on the page's origin, serve on its own port), so every answer to a
 * page, errors included, must carry `Access-Control-Allow-Origin`: an answer
 * the page cannot read is a network failure to the library, which sends the
 * event again (analytics.js 1.83: the same event 4–5 times). analytics.js ≥
 * 1.84 sends Basic auth in a header, so each path is preflighted first.
 *
 * No `Access-Control-Allow-Credentials`, ever: the library sends the write key
 * as an explicit header (no cookies, fetch's default `same-origin`
 * credentials), serve sets no cookies, and a reflected origin with
 * credentials would let any page read answers with the user's cookies for
 * 127.0.0.1. A page configured with `credentials: 'include'` (a
 * `deliveryStrategy.config` option) is refused by its browser; say so in the
 * docs rather than open that door.
 */

/** Which page origins may call serve: any (the default), or those given with `--allow-origin`. */
export type AllowedOrigins = { any: true } | { any: false; origins: ReadonlySet<string> };

export const ANY_ORIGIN: AllowedOrigins = { any: true };

export type AllowedOriginsResult = { ok: true; allowed: AllowedOrigins } | { ok: false; error: string };

/**
 * The setting from the values given (a repeatable flag). `*` means any; each
 * other value is an origin as a browser sends it, normalized: `HTTP://Local
 * Host:3000/` is `http://localhost:3000`, a default port is dropped. `null`
 * (pages opened from a file, sandboxed frames) is allowed only when listed.
 */
export function allowedOrigins(values: readonly string[]): AllowedOriginsResult {
  if (values.length === 0) return { ok: true, allowed: ANY_ORIGIN };
  const origins = new Set<string>();
  for (const value of values) {
    const origin = normalizeOrigin(value);
    if (origin === undefined) {
      return {
        ok: false,
        error: `${JSON.stringify(value)} is not an origin: give scheme://host[:port] as the page's address bar shows it, e.g. http://localhost:3000`,
      };
    }
    if (origin === "*") return { ok: true, allowed: ANY_ORIGIN };
    origins.add(origin);
  }
  return { ok: true, allowed: { any: false, origins } };
}

/** An origin as browsers serialize it, `*`, `null`, or undefined when `value` is no origin (it has a path, a query, a user…). */
export function normalizeOrigin(value: string): string | undefined {
  const text = value.trim();
  if (text === "*" || text === "null") return text;
  if (!URL.canParse(text)) return undefined;
  const url = new URL(text);
  if (url.host === "" || url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") return undefined;
  if (url.pathname !== "" && url.pathname !== "/") return undefined;
  // URL.origin is "null" for schemes other than http(s) (a browser extension's page sends chrome-extension://ID).
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : `${url.protocol}//${url.host}`;
}

/** The request headers CORS looks at. */
export interface CorsRequest {
  origin: string | undefined;
  /** A preflight's `Access-Control-Request-Headers`. */
  requestHeaders?: string | undefined;
  /** A preflight's `Access-Control-Request-Private-Network` (Chromium, a public page calling a local address). */
  requestPrivateNetwork?: string | undefined;
  /** `Sec-Fetch-Site`: a browser's word that a page made the request (pageRefusedByFunction). */
  secFetchSite?: string | undefined;
}

export function corsRequestOf(headers: IncomingHttpHeaders): CorsRequest {
  return {
    origin: headers.origin,
    requestHeaders: headers["access-control-request-headers"],
    requestPrivateNetwork: first(headers["access-control-request-private-network"]),
    secFetchSite: first(headers["sec-fetch-site"]),
  };
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export type CorsHeaders = Record<string, string>;

/** How serve answers a page: with these headers added, or refused (403, `message`, these headers: no allow). */
export type CorsVerdict = { allowed: true; headers: CorsHeaders } | { allowed: false; headers: CorsHeaders; message: string };

/**
 * The headers of every answer that is not a preflight, errors included. A
 * request without Origin (a server-side client, curl) is no CORS request:
 * answered as is. An origin that is not allowed gets no allow and should be
 * refused (403) without being acted on: a `text/plain` POST needs no
 * preflight, so the answer is the only place to stop it.
 */
export function corsFor(request: CorsRequest, allowed: AllowedOrigins): CorsVerdict {
  const origin = request.origin;
  // The answer depends on Origin even when there is none: a cache must not give a page the answer to curl.
  const vary = { Vary: "Origin" };
  if (origin === undefined) return { allowed: true, headers: vary };
  const refusal = refusalOf(origin, allowed);
  if (refusal !== undefined) return { allowed: false, headers: vary, message: refusal };
  return { allowed: true, headers: { ...vary, "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED_HEADERS } };
}

/** The answer to an OPTIONS request on a path that takes `methods`: 204 with the allow headers, or 403. */
export function preflight(
  request: CorsRequest,
  allowed: AllowedOrigins,
  methods: readonly string[],
): { status: 204 | 403; headers: CorsHeaders; message?: string } {
  const allow = { Allow: [...methods, "OPTIONS"].join(", ") };
  const vary = { Vary: "Origin, Access-Control-Request-Headers, Access-Control-Request-Private-Network" };
  const origin = request.origin;
  // An OPTIONS without Origin is no preflight: what the path takes is all there is to say.
  if (origin === undefined) return { status: 204, headers: { ...vary, ...allow } };
  const refusal = refusalOf(origin, allowed);
  if (refusal !== undefined) return { status: 403, headers: vary, message: refusal };
  const headers: CorsHeaders = {
    ...vary,
    ...allow,
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": methods.join(", "),
    "Access-Control-Allow-Headers": allowedRequestHeaders(request.requestHeaders),
    "Access-Control-Max-Age": String(PREFLIGHT_MAX_AGE_S),
  };
  // Private Network Access: a public page reaching serve on this machine or the LAN. Only for pages the user
  // named: with the default (any origin) Chromium's guard against any website posting to a local port stays on.
  if (request.requestPrivateNetwork?.toLowerCase() === "true" && !allowed.any) headers["Access-Control-Allow-Private-Network"] = "true";
  return { status: 204, headers };
}

/**
 * How long a browser may reuse a preflight answer: Chromium's cap (2 hours;
 * Firefox allows a day). analytics.js preflights each of its six paths, and
 * again whenever a retry adds X-Retry-Count, which the answer already allows.
 */
export const PREFLIGHT_MAX_AGE_S = 7200;

/** A page cannot read Retry-After cross-origin unless the answer exposes it (it is no CORS-safelisted response header). */
const EXPOSED_HEADERS = "Retry-After";

/** What analytics.js sends: Content-Type, Basic auth, and X-Retry-Count on a retry. */
const BASE_REQUEST_HEADERS = ["content-type", "authorization", "x-retry-count"];
/** Requested header names echoed at most (each a valid token), beyond the base list. */
const MAX_ECHOED_HEADERS = 32;
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/;

/** The base list plus the valid names the page asked for (its own headers, `deliveryStrategy.config.headers`). */
function allowedRequestHeaders(requested: string | undefined): string {
  const names = new Set(BASE_REQUEST_HEADERS);
  if (requested !== undefined) {
    let echoed = 0;
    for (const part of requested.split(",")) {
      const name = part.trim().toLowerCase();
      if (!TOKEN.test(name) || names.has(name)) continue;
      if (++echoed > MAX_ECHOED_HEADERS) break;
      names.add(name);
    }
  }
  return [...names].join(", ");
}

/** Origins as browsers send them: a scheme, `://`, a host (and port); or `null`. Anything else is not echoed into a header. */
const ORIGIN_SYNTAX = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\x00-\x20\x7f-\xff/?#,]{1,1000}$/;

function refusalOf(origin: string, allowed: AllowedOrigins): string | undefined {
  if (origin !== "null" && !ORIGIN_SYNTAX.test(origin)) return "the Origin header is not an origin";
  if (allowed.any || allowed.origins.has(origin)) return undefined;
  return `requests from pages at ${origin} are not allowed here (allowed origins: ${[...allowed.origins].join(", ")})`;
}

/**
 * A source function's route (docs/serve-api.md#source-functions) takes a provider's webhooks, which
 * servers send: a request a page made (it carries an Origin, or a Sec-Fetch-Site other than `none`,
 * as a no-cors form post or `<img>` does) runs the user's function only when its origin was named
 * with --allow-origin. So a website open in a browser cannot make a local function call APIs with
 * its settings' keys. Undefined: not a page's request, or an allowed one; else why it is refused.
 */
export function pageRefusedByFunction(request: CorsRequest, allowed: AllowedOrigins): string | undefined {
  const fromPage = request.origin !== undefined || (request.secFetchSite !== undefined && request.secFetchSite !== "none");
  if (!fromPage) return undefined;
  if (!allowed.any && request.origin !== undefined && allowed.origins.has(request.origin)) return undefined;
  const who = request.origin ?? `a page (Sec-Fetch-Site: ${request.secFetchSite})`;
  return `a source function takes webhooks from servers, not requests from pages: ${who} refused (--allow-origin names a page that may post here)`;
}
