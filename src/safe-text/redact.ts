import { replaceUrls } from "./text-urls.js";

/**
 * The one place credentials are masked before anything is printed or
 * written (stdout, --json, retry lines, dead-letter and JUnit files, serve's
 * failed list, listen's recording). Pure.
 */
export const REDACTED = "[redacted]";
/** What replaces a credential inside a URL or a line of text. */
export const MASK = "***";

// Headers that are credentials of their own; their values are never shown or recorded.
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization", "x-api-key", "api-key", "x-auth-token"]);
const CREDENTIAL_WORDS = new Set([
  "token",
  "key",
  "secret",
  "signature",
  "sig",
  "password",
  "passwd",
  "pwd",
  "auth",
  "authorization",
  "credential",
  "credentials",
]);

export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.has(name.toLowerCase());
}

/** `token`, `api_key`, `accessToken`, `X-Auth`, `apikey`: a query parameter whose value is masked. */
export function isCredentialName(name: string): boolean {
  const parts = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return parts.some((part) => CREDENTIAL_WORDS.has(part) || /(token|secret|password|apikey)$/.test(part) || part.startsWith("auth"));
}

/**
 * The secrets to mask: one, or several (key rotation: `--secret` repeated), or none. Every place that
 * masks takes this, so a second secret is never shown where the first would be masked.
 */
export type Secrets = string | readonly string[] | undefined;

export function redactHeaders(headers: Readonly<Record<string, string | readonly string[] | undefined>>, secret?: Secrets): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const holdsSecret = typeof value === "string" ? holdsAny(value, secret) : value.some((v) => holdsAny(v, secret));
    out[name] = isCredentialHeader(name) || holdsSecret ? REDACTED : typeof value === "string" ? value : [...value];
  }
  return out;
}

function holdsAny(value: string, secret: Secrets): boolean {
  if (secret === undefined) return false;
  if (typeof secret === "string") return secret !== "" && value.includes(secret);
  return secret.some((one) => one !== "" && value.includes(one));
}

/** An app's response headers, redacted: request credentials as in redactHeaders, and its cookies (its users' credentials). */
export function redactResponseHeaders(headers: Readonly<Record<string, string | readonly string[] | undefined>>): Record<string, string | string[]> {
  const out = redactHeaders(headers);
  if (out["set-cookie"] !== undefined) out["set-cookie"] = REDACTED;
  return out;
}

/**
 * A URL or a request path (`/hook?token=…`) with its credentials masked:
 * the userinfo password, credential-like query values and the secret.
 * Everything else is left byte for byte.
 */
export function redactUrl(url: string, secret?: Secrets): string {
  // Most request paths (`/webhook`): no userinfo, no query, so only the secret could be in them.
  if (!url.includes("@") && !url.includes("?")) return maskSecret(url, secret);
  let out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i, (_match, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(":");
    return `${scheme}${colon === -1 ? userinfo : `${userinfo.slice(0, colon)}:${MASK}`}@`;
  });
  const query = out.indexOf("?");
  if (query !== -1) {
    const hash = out.indexOf("#", query);
    const end = hash === -1 ? out.length : hash;
    const params = out
      .slice(query + 1, end)
      .split("&")
      .map((pair) => {
        const equals = pair.indexOf("=");
        if (equals === -1) return pair;
        return isCredentialName(safeDecode(pair.slice(0, equals))) ? `${pair.slice(0, equals)}=${MASK}` : pair;
      });
    out = `${out.slice(0, query + 1)}${params.join("&")}${out.slice(end)}`;
  }
  return maskSecret(out, secret);
}

/** A line of text with every URL in it redacted and the secret (as is, or URL-encoded) masked. */
export function redactText(text: string, secret?: Secrets): string {
  // Most text holds no URL: it is searched for one once (listen redacts its request lines in blocks).
  const urls = text.includes("://") || text.includes("?");
  if (!urls && !maskable(secret)) return text;
  return maskSecret(urls ? replaceUrls(text, (url) => redactUrl(url)) : text, secret);
}

// A secret this short would mask ordinary words in every line; it is not worth hiding anyway.
const MIN_MASKED_SECRET = 4;

function maskable(secret: Secrets): boolean {
  if (secret === undefined) return false;
  if (typeof secret === "string") return secret.length >= MIN_MASKED_SECRET;
  return secret.some((one) => one.length >= MIN_MASKED_SECRET);
}

/** `text` with each secret (as is, or URL-encoded) masked; secrets under 4 characters are left alone. */
export function maskSecret(text: string, secret: Secrets): string {
  if (secret === undefined || typeof secret === "string") return maskOne(text, secret);
  let out = text;
  for (const one of secret) out = maskOne(out, one);
  return out;
}

function maskOne(text: string, secret: string | undefined): string {
  if (secret === undefined || secret.length < MIN_MASKED_SECRET) return text;
  // Checked before splitting: this runs for every request listen shows, and the secret is rarely there.
  let out = text.includes(secret) ? text.split(secret).join(MASK) : text;
  const encoded = encodedSecret(secret);
  if (encoded !== secret && out.includes(encoded)) out = out.split(encoded).join(MASK);
  return out;
}

const ENCODED = new Map<string, string>();

/** encodeURIComponent of the secret, kept for the few secrets a run has. */
function encodedSecret(secret: string): string {
  let encoded = ENCODED.get(secret);
  if (encoded === undefined) {
    if (ENCODED.size >= 16) ENCODED.clear();
    encoded = encodeURIComponent(secret);
    ENCODED.set(secret, encoded);
  }
  return encoded;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}
