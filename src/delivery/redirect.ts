/**
 * Following a redirect as the Webhooks (Actions) destination's request client does
 * (docs/actions.md#redirects): it is fetch-based (node-fetch 2.7 on Node.js) and sets no
 * `redirect`, so fetch's rules hold, as the captured fixtures show (fixtures/actions/captured/redirect-*.json).
 * Pure: the next request from the answer, or nothing to follow.
 */

/** One request of a chain. */
export interface Hop {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** undefined: no body (after a redirect that became a GET). */
  body: Buffer | undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Dropped when the next host or scheme differs, as node-fetch does.
const CREDENTIALS = new Set(["authorization", "www-authenticate", "cookie", "cookie2"]);

/** True for the statuses fetch follows (when they carry a Location). */
export function isRedirect(status: number): boolean {
  return REDIRECTS.has(status);
}

/**
 * The request after `status` with `location`: undefined when there is nothing to follow (not a
 * redirect status, or no Location), `{ invalid }` when the Location is not an http(s) URL.
 * 303, and 301/302 after a POST, become a GET without a body; 307 and 308 (and 301/302 after a
 * PUT or PATCH) keep the method and the body. Every header follows, X-Signature included, but
 * the credentials when the host or scheme changes.
 */
export function nextHop(current: Hop, status: number, location: string | string[] | undefined): Hop | { invalid: string } | undefined {
  const where = Array.isArray(location) ? location[0] : location;
  if (!REDIRECTS.has(status) || where === undefined) return undefined;
  let next: URL;
  try {
    next = new URL(where, current.url);
  } catch {
    return { invalid: `redirect to an invalid Location "${where}"` };
  }
  if (next.protocol !== "http:" && next.protocol !== "https:") return { invalid: `redirect to a URL that is not http: or https: (${next.protocol})` };
  const before = new URL(current.url);
  const toGet = status === 303 || ((status === 301 || status === 302) && current.method === "POST");
  const sameSite = before.hostname === next.hostname && before.protocol === next.protocol;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(current.headers)) {
    const lower = name.toLowerCase();
    if ((toGet && lower === "content-length") || (!sameSite && CREDENTIALS.has(lower))) continue;
    headers[name] = value;
  }
  return { url: next.href, method: toGet ? "GET" : current.method, headers, body: toGet ? undefined : current.body };
}
