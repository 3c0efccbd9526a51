import { SchemeError } from "../errors.js";
import { isAbsoluteUrl, isForm, macOf, withBodyHash, type ContentFields } from "./content.js";
import type { Scheme, SignatureHeader } from "./schemes.js";
import type { SchemeKey } from "./secrets.js";

/** What a request is signed over, besides the secrets. */
export interface SignInput {
  /** The exact bytes sent; a string is taken as UTF-8. */
  body: Uint8Array | string;
  /** The sender's clock, Unix seconds: fresh on every attempt of a timestamped scheme. */
  timestamp: number;
  /** The message id: the same on every retry and re-send of one message (messageId makes one); unused by a scheme without an id header. */
  id: string;
  /** The full URL the request is sent to (a scheme that signs the URL: Twilio). */
  url?: string | undefined;
  /** The request's Content-Type (Twilio signs a form by its parameters, any other body by its hash). */
  contentType?: string | undefined;
  /** The event header's value (GitHub's X-GitHub-Event, Shopify's X-Shopify-Topic); default the scheme's example. */
  event?: string | undefined;
  /** Also the scheme's older header (GitHub's X-Hub-Signature, SHA-1). */
  legacy?: boolean | undefined;
}

export interface SignedRequest {
  /** The headers to send, in order, names as the sender spells them. */
  headers: [name: string, value: string][];
  /** The URL to send to: the one given, with `bodySHA256` added when Twilio signs a body that is not a form; else undefined. */
  url: string | undefined;
}

/**
 * THE signer (docs/schemes.md): the headers `scheme` sends for one request, signed with the first
 * key, or with each key when the scheme carries a list (key rotation). Pure: no clock, no
 * randomness (the timestamp and id are inputs). A request the scheme cannot sign (no URL for
 * Twilio, an id with a dot) is a SchemeError.
 */
export function signRequest(scheme: Scheme, keys: readonly SchemeKey[], input: SignInput): SignedRequest {
  if (keys.length === 0) throw new SchemeError(`scheme ${scheme.name} needs a secret`);
  const body = typeof input.body === "string" ? Buffer.from(input.body, "utf8") : input.body;
  const id = checkedId(scheme, input);
  // Written once: the signed content, the timestamp header and Stripe's `t=` part carry the same digits.
  const timestamp = String(input.timestamp);
  const url = scheme.content === "url+form" ? sentUrl(scheme, input, body) : undefined;
  const fields: ContentFields = { body, id, timestamp, url: url ?? "", contentType: input.contentType };
  const signing = scheme.signsEachSecret ? keys : keys.slice(0, 1);
  const headers: [string, string][] = [];
  if (scheme.event) headers.push([scheme.event.header, checkedValue(input.event ?? scheme.event.example, "event")]);
  if (scheme.id) headers.push([scheme.id.header, id]);
  if (scheme.timestamp?.header) headers.push([scheme.timestamp.header, timestamp]);
  headers.push([scheme.signature.name, signatureValue(scheme, scheme.signature, signing, fields)]);
  if (input.legacy && scheme.legacy) headers.push([scheme.legacy.name, signatureValue(scheme, scheme.legacy, signing, fields)]);
  for (const [name, value] of scheme.fixed ?? []) headers.push([name, value]);
  if (scheme.sentAt) headers.push([scheme.sentAt, new Date(input.timestamp * 1000).toISOString()]);
  return { headers, url };
}

/** One header's value: each key's signature behind the prefix, joined by the separator; Stripe's `t=` first. */
function signatureValue(scheme: Scheme, header: SignatureHeader, keys: readonly SchemeKey[], fields: ContentFields): string {
  // One key and no `t=` part (the usual request): the signature alone, without a list to join.
  const part = scheme.timestamp?.part;
  if (keys.length === 1 && part === undefined) return header.prefix + macOf(scheme, header, (keys[0] as SchemeKey).key, fields);
  const signatures = part === undefined ? [] : [`${part}${fields.timestamp}`];
  for (const { key } of keys) signatures.push(header.prefix + macOf(scheme, header, key, fields));
  return signatures.join(header.separator ?? "");
}

/** A header value we write: printable ASCII, no spaces at its ends (nothing that could split or bend the header). */
const HEADER_VALUE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/** The message id the scheme signs and sends ("" for a scheme without one), after checking the timestamp and the id. */
function checkedId(scheme: Scheme, input: SignInput): string {
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) {
    throw new SchemeError(`the timestamp must be whole Unix seconds, got ${input.timestamp}`, { field: "timestamp" });
  }
  // A scheme without an id header signs none: whatever was given is not used.
  if (!scheme.id) return "";
  const id = checkedValue(input.id, "id");
  if (dotRefused(scheme, id)) {
    throw new SchemeError(`scheme ${scheme.name} signs id.timestamp.body: the id must not contain a dot, got ${JSON.stringify(id)}`, { field: "id" });
  }
  return id;
}

/** Whether the signer takes `id` as `scheme`'s message id as it is (a re-send keeps such an id): a header value we write, and no dot where the id is signed. */
export function signableId(scheme: Scheme, id: string): boolean {
  return HEADER_VALUE.test(id) && !dotRefused(scheme, id);
}

/** Standard Webhooks: the id must not hold a dot, which would let one signed content pass for another. */
function dotRefused(scheme: Scheme, id: string): boolean {
  return scheme.content === "id.timestamp.body" && id.includes(".");
}

/** A header value we write, else a SchemeError naming the field. */
function checkedValue(value: string, field: string): string {
  if (!HEADER_VALUE.test(value)) {
    throw new SchemeError(`the ${field} must be printable ASCII without spaces at either end, got ${JSON.stringify(value)}`, { field });
  }
  return value;
}

/** Twilio: the URL signed and sent to; a body that is not a form travels as its hash in the URL. */
function sentUrl(scheme: Scheme, input: SignInput, body: Uint8Array): string {
  const url = input.url;
  if (url === undefined) throw new SchemeError(`scheme ${scheme.name} signs the URL: give the full URL the request is sent to`, { field: "url" });
  if (!isAbsoluteUrl(url))
    throw new SchemeError(`scheme ${scheme.name} signs the full URL (https://host/path?query), got ${JSON.stringify(url)}`, { field: "url" });
  if (isForm(input.contentType)) return url;
  if (/[?&]bodySHA256=/.test(url)) throw new SchemeError("the URL already has a bodySHA256 parameter: give it without", { field: "url" });
  return withBodyHash(url, body);
}

/**
 * A new message id in the form the scheme's senders use: `msg_` and 22 base64url characters for
 * Standard Webhooks and Svix, a UUID (version 4) for GitHub and Shopify, "" for schemes without
 * one. `randomBytes` is injected, so tests get the same id every run.
 */
export function messageId(scheme: Scheme, randomBytes: (size: number) => Uint8Array): string {
  if (!scheme.id) return "";
  const bytes = Buffer.from(randomBytes(16));
  if (scheme.id.form === "msg") return `msg_${bytes.toString("base64url")}`;
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
