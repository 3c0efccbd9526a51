import { createHash, createHmac, type KeyObject } from "node:crypto";
import type { Scheme, SignatureHeader } from "./schemes.js";

/** What a scheme may sign besides the body; the signer and the verifier fill it alike. */
export interface ContentFields {
  body: Uint8Array;
  /** The message id as sent (`webhook-id`, `svix-id`). */
  id: string;
  /** The Unix timestamp as sent, digits. */
  timestamp: string;
  /** The full URL the sender used, query included (Twilio). */
  url: string;
  /** The request's Content-Type (Twilio: a form is signed by its parameters). */
  contentType: string | undefined;
}

/**
 * The MAC of a scheme's signed content (schemes.ts SignedContent) under one key, encoded as the
 * header carries it (without the prefix). The body goes to the HMAC as its bytes, never as
 * re-serialised JSON; the pieces around it are ASCII.
 */
export function macOf(scheme: Scheme, header: SignatureHeader, key: KeyObject, fields: ContentFields): string {
  const hmac = createHmac(header.mac, key);
  switch (scheme.content) {
    case "body":
      hmac.update(fields.body);
      break;
    case "id.timestamp.body":
      hmac.update(`${fields.id}.${fields.timestamp}.`).update(fields.body);
      break;
    case "timestamp.body":
      hmac.update(`${fields.timestamp}.`).update(fields.body);
      break;
    case "v0:timestamp:body":
      hmac.update(`v0:${fields.timestamp}:`).update(fields.body);
      break;
    case "url+form":
      hmac.update(urlFormText(fields), "utf8");
      break;
  }
  return hmac.digest(header.encoding);
}

/** Twilio's signed text: the URL, then for a form each parameter name and value, names sorted (a bodySHA256 URL: the URL alone). */
function urlFormText(fields: ContentFields): string {
  if (!isForm(fields.contentType)) return fields.url;
  let text = fields.url;
  for (const [name, values] of formParameters(fields.body)) for (const value of values) text += name + value;
  return text;
}

/** Whether a Content-Type is an HTML form (`application/x-www-form-urlencoded`, any parameters). */
export function isForm(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType);
}

/**
 * A form body's parameters as Twilio's validator takes them: names sorted by UTF-16 code units,
 * each name's values without repeats, sorted.
 */
function formParameters(body: Uint8Array): [string, string[]][] {
  const byName = new Map<string, Set<string>>();
  for (const [name, value] of new URLSearchParams(Buffer.from(body).toString("utf8"))) {
    const values = byName.get(name) ?? new Set<string>();
    values.add(value);
    byName.set(name, values);
  }
  return [...byName.keys()].sort().map((name) => [name, [...(byName.get(name) as Set<string>)].sort()]);
}

/** Lower-case hex SHA-256 of the body: Twilio's `bodySHA256` for a body that is not a form. */
export function bodyHash(body: Uint8Array): string {
  return createHash("sha256").update(body).digest("hex");
}

/** The URL with `bodySHA256=<hash>` appended to its query, as Twilio sends a JSON body. */
export function withBodyHash(url: string, body: Uint8Array): string {
  const hashAt = url.indexOf("#");
  const base = hashAt === -1 ? url : url.slice(0, hashAt);
  return `${base}${base.includes("?") ? "&" : "?"}bodySHA256=${bodyHash(body)}`;
}

/** The `bodySHA256` query parameter of a URL, or undefined. */
export function bodyHashOf(url: string): string | undefined {
  try {
    return new URL(url).searchParams.get("bodySHA256") ?? undefined;
  } catch {
    return undefined;
  }
}

/** Whether a URL is absolute (`https://…`): the only kind a URL-signing scheme can use. */
export function isAbsoluteUrl(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+/i.test(url);
}

/**
 * The URL as given, then without and with its default port, as Twilio's validator tries them (a
 * proxy or the sender may add or drop `:443`). Only the authority changes; the path stays byte for byte.
 */
export function urlForms(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return [url];
  const [prefix, scheme, authority] = match as unknown as [string, string, string];
  const rest = url.slice(prefix.length);
  const hostAndPort = authority.slice(authority.lastIndexOf("@") + 1);
  const userInfo = authority.slice(0, authority.length - hostAndPort.length);
  const portAt = hostAndPort.indexOf(":", hostAndPort.lastIndexOf("]") + 1);
  const host = portAt === -1 ? hostAndPort : hostAndPort.slice(0, portAt);
  const defaultPort = scheme.toLowerCase() === "https://" ? ":443" : ":80";
  const forms = [url, `${scheme}${userInfo}${host}${rest}`, `${scheme}${userInfo}${host}${portAt === -1 ? defaultPort : hostAndPort.slice(portAt)}${rest}`];
  return [...new Set(forms)];
}
