import { SchemeError, type ErrorSource } from "../errors.js";
import { deepFrozen } from "../util/frozen.js";
import { didYouMean } from "../util/suggest.js";

/*
 * The signature schemes as data, one entry per sender, side by side (docs/schemes.md#the-schemes).
 * One signer (sign.ts) and one verifier (verify.ts) read these entries and hold no scheme of their
 * own: a new scheme is one entry here and one test against its owner's library
 * (docs/schemes.md#adding-a-scheme). Each entry follows its owner's own code, named in `owner`.
 */

export const SCHEME_NAMES = deepFrozen(["default", "standard", "svix", "github", "stripe", "shopify", "slack", "twilio"] as const);
export type SchemeName = (typeof SCHEME_NAMES)[number];

/**
 * What the MAC covers, byte for byte (content.ts builds it):
 * - `body`: the body as received;
 * - `id.timestamp.body`: the message id, `.`, the Unix timestamp, `.`, the body;
 * - `timestamp.body`: the timestamp, `.`, the body;
 * - `v0:timestamp:body`: `v0:`, the timestamp, `:`, the body;
 * - `url+form`: the full URL, then each form parameter's name and value, names sorted; a body
 *   that is not a form is covered through a `bodySHA256` query parameter of the URL instead.
 */
export type SignedContent = "body" | "id.timestamp.body" | "timestamp.body" | "v0:timestamp:body" | "url+form";

/**
 * How the secret text becomes the HMAC key: `text` its UTF-8 bytes (a `whsec_` prefix included:
 * Stripe's); `whsec-base64` the base64 after an optional `whsec_` prefix, decoded (Standard Webhooks).
 */
export type SecretFormat = "text" | "whsec-base64";

/** A header that carries signatures. */
export interface SignatureHeader {
  /** As the sender spells it; matched without regard to case. */
  readonly name: string;
  readonly mac: "sha1" | "sha256";
  readonly encoding: "hex" | "base64";
  /** Written before each signature: `v1,`, `sha256=`, `v0=`, or nothing. */
  readonly prefix: string;
  /** Several signatures in one header (key rotation), joined by this; absent: exactly one. */
  readonly separator?: " " | ",";
}

export interface Scheme {
  readonly name: SchemeName;
  /** Whose rules these are (the judge of its tests). */
  readonly owner: string;
  readonly signature: SignatureHeader;
  /** A second, older signature header the sender adds only when asked, verified when it is the only one (GitHub's SHA-1). */
  readonly legacy?: SignatureHeader;
  readonly content: SignedContent;
  readonly secret: SecretFormat;
  /**
   * Where the signed Unix timestamp travels (its own header, or a `t=` part of the signature
   * header) and how far from the receiver's clock it may be; `past` only: a timestamp ahead of
   * the clock is accepted, as the owner's verifier does.
   */
  readonly timestamp?: {
    readonly header?: string;
    readonly part?: string;
    readonly toleranceSeconds: number;
    readonly refuses: "past" | "both";
  };
  /** The message id header: stable across retries and re-sends, so a receiver can drop duplicates. */
  readonly id?: { readonly header: string; readonly form: "msg" | "uuid" };
  /** The header naming the event, and what the signer writes when given none. */
  readonly event?: { readonly header: string; readonly example: string };
  /** Headers the owner's receivers also require, with the value the signer writes (not signed). */
  readonly fixed?: readonly (readonly [name: string, value: string])[];
  /** An unsigned header holding the timestamp as ISO 8601 (Shopify's X-Shopify-Triggered-At). */
  readonly sentAt?: string;
  /** With several secrets, the signer signs with each (the scheme carries a list); otherwise with the first. */
  readonly signsEachSecret: boolean;
}

const FIVE_MINUTES = 5 * 60;

const STANDARD_SIGNATURE = { mac: "sha256", encoding: "base64", prefix: "v1,", separator: " " } as const;

// Frozen all the way down: the table is public.
export const SCHEMES: Readonly<Record<SchemeName, Scheme>> = deepFrozen({
  // Today's: the Webhooks destination's X-Signature (docs/delivery.md#signature).
  default: {
    name: "default",
    owner: "the Webhooks destination (X-Signature)",
    signature: { name: "X-Signature", mac: "sha1", encoding: "hex", prefix: "" },
    content: "body",
    secret: "text",
    signsEachSecret: false,
  },
  standard: {
    name: "standard",
    owner: "Standard Webhooks 1.0 (standardwebhooks)",
    signature: { name: "webhook-signature", ...STANDARD_SIGNATURE },
    content: "id.timestamp.body",
    secret: "whsec-base64",
    timestamp: { header: "webhook-timestamp", toleranceSeconds: FIVE_MINUTES, refuses: "both" },
    id: { header: "webhook-id", form: "msg" },
    signsEachSecret: true,
  },
  svix: {
    name: "svix",
    owner: "Svix (svix)",
    signature: { name: "svix-signature", ...STANDARD_SIGNATURE },
    content: "id.timestamp.body",
    secret: "whsec-base64",
    timestamp: { header: "svix-timestamp", toleranceSeconds: FIVE_MINUTES, refuses: "both" },
    id: { header: "svix-id", form: "msg" },
    signsEachSecret: true,
  },
  // No timestamp: GitHub signs the body alone (a replayed delivery verifies; X-GitHub-Delivery tells it apart).
  github: {
    name: "github",
    owner: "GitHub (@octokit/webhooks-methods)",
    signature: { name: "X-Hub-Signature-256", mac: "sha256", encoding: "hex", prefix: "sha256=" },
    legacy: { name: "X-Hub-Signature", mac: "sha1", encoding: "hex", prefix: "sha1=" },
    content: "body",
    secret: "text",
    id: { header: "X-GitHub-Delivery", form: "uuid" },
    event: { header: "X-GitHub-Event", example: "ping" },
    signsEachSecret: false,
  },
  // `t=<ts>,v1=<hex>[,v1=<hex>]`: the timestamp is a part of the signature header. The event id is in the body.
  stripe: {
    name: "stripe",
    owner: "Stripe (stripe: webhooks.constructEvent)",
    signature: { name: "Stripe-Signature", mac: "sha256", encoding: "hex", prefix: "v1=", separator: "," },
    content: "timestamp.body",
    secret: "text",
    timestamp: { part: "t=", toleranceSeconds: 300, refuses: "past" },
    signsEachSecret: true,
  },
  // Shopify's receivers (shopify-api's webhooks.validate) also require the topic, shop domain, API version and id.
  shopify: {
    name: "shopify",
    owner: "Shopify (its docs' HMAC check)",
    signature: { name: "X-Shopify-Hmac-Sha256", mac: "sha256", encoding: "base64", prefix: "" },
    content: "body",
    secret: "text",
    id: { header: "X-Shopify-Webhook-Id", form: "uuid" },
    event: { header: "X-Shopify-Topic", example: "orders/create" },
    fixed: [
      ["X-Shopify-Shop-Domain", "example.myshopify.com"],
      ["X-Shopify-API-Version", "2025-07"],
    ],
    sentAt: "X-Shopify-Triggered-At",
    signsEachSecret: false,
  },
  slack: {
    name: "slack",
    owner: "Slack (@slack/bolt: verifySlackRequest)",
    signature: { name: "X-Slack-Signature", mac: "sha256", encoding: "hex", prefix: "v0=" },
    content: "v0:timestamp:body",
    secret: "text",
    timestamp: { header: "X-Slack-Request-Timestamp", toleranceSeconds: FIVE_MINUTES, refuses: "past" },
    signsEachSecret: false,
  },
  // The URL is signed: the receiver must know the URL the sender used (a proxy in front changes it).
  twilio: {
    name: "twilio",
    owner: "Twilio (twilio: validateRequest, validateRequestWithBody)",
    signature: { name: "X-Twilio-Signature", mac: "sha1", encoding: "base64", prefix: "" },
    content: "url+form",
    secret: "text",
    signsEachSecret: false,
  },
});

/** The scheme called `name`; an unknown name is a SchemeError with the closest name, if one is close, and the list. */
export function schemeNamed(name: string, source: ErrorSource = { field: "scheme" }): Scheme {
  if (Object.hasOwn(SCHEMES, name)) return SCHEMES[name as SchemeName];
  throw new SchemeError(`unknown scheme ${JSON.stringify(name)}${didYouMean(name, SCHEME_NAMES)}; the schemes are ${SCHEME_NAMES.join(", ")}`, source);
}

/**
 * The headers the signer writes for `scheme`, lower-case: a resend drops the recorded ones before
 * signing again (a stale signature or timestamp must not travel beside the fresh one).
 */
export function writtenHeaderNames(scheme: Scheme): string[] {
  const names = [scheme.signature.name, scheme.legacy?.name, scheme.timestamp?.header, scheme.id?.header, scheme.event?.header, scheme.sentAt];
  for (const [name] of scheme.fixed ?? []) names.push(name);
  return names.filter((name): name is string => name !== undefined).map((name) => name.toLowerCase());
}
