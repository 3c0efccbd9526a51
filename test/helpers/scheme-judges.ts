import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { sign as githubSign, verify as githubVerify } from "@octokit/webhooks-methods";
import { verifySlackRequest } from "@slack/bolt";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as Svix } from "svix";
import twilio from "twilio";
import type { SchemeName } from "../../src/signing/schemes.js";

/*
 * Each scheme's judge, from its owner (docs/schemes.md#the-schemes): the owner's own verifier, and
 * the owner's own signer (where it has none: the computation its docs give, the way its receivers
 * check it). The commands' tests (send, replay, listen, startReceiver, Resend) are judged by these,
 * never by our own signer or verifier.
 */

/** A request as a receiver got it: lower-case header names, the exact bytes, the full URL the sender used. */
export interface JudgedRequest {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
  url: string;
}

/** One secret that every scheme takes: Standard Webhooks and Svix decode its base64; the others use its text. */
export const ANY_SCHEME_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/** Another, for "a wrong secret" and rotation. */
export const OTHER_SECRET = `whsec_${Buffer.from("the secret before the rotation!!").toString("base64")}`;

export const JUDGES: Record<SchemeName, string> = {
  default: "HMAC-SHA1 hex of the body (the destination's documented X-Signature; openssl vectors in test/unit/signing/default.test.ts)",
  standard: "standardwebhooks@1.1.1 (Webhook.verify, Webhook.sign)",
  svix: "svix@2.5.0 (Webhook.verify, Webhook.sign)",
  github: "@octokit/webhooks-methods@6.0.0 (verify, sign)",
  stripe: "stripe@23.1.0 (webhooks.constructEvent, webhooks.generateTestHeaderString)",
  shopify: "Shopify's documented HMAC check (HMAC-SHA256 base64 of the raw body)",
  slack: "@slack/bolt@5.1.0 (verifySlackRequest); Slack's documented v0 signature to sign",
  twilio: "twilio@6.3.1 (validateRequestWithBody, getExpectedTwilioSignature)",
};

function one(headers: JudgedRequest["headers"], name: string): string {
  const value = headers[name];
  return Array.isArray(value) ? value.join(", ") : (value ?? "");
}

/** Whether the scheme's owner accepts the request as signed with `secret` (its own tolerance of 5 minutes applies). */
export async function ownerVerifies(scheme: SchemeName, secret: string, request: JudgedRequest): Promise<boolean> {
  const { headers, body, url } = request;
  try {
    switch (scheme) {
      case "default":
        return sameText(createHmac("sha1", secret).update(body).digest("hex"), one(headers, "x-signature"));
      case "standard":
        new Webhook(secret).verify(body, stringHeaders(headers));
        return true;
      case "svix":
        new Svix(secret).verify(body.toString("utf8"), stringHeaders(headers));
        return true;
      case "github":
        return await githubVerify(secret, body.toString("utf8"), one(headers, "x-hub-signature-256"));
      case "stripe":
        Stripe.webhooks.constructEvent(body, one(headers, "stripe-signature"), secret);
        return true;
      case "shopify":
        return sameText(createHmac("sha256", secret).update(body).digest("base64"), one(headers, "x-shopify-hmac-sha256"));
      case "slack":
        verifySlackRequest({
          signingSecret: secret,
          body: body.toString("utf8"),
          headers: { "x-slack-signature": one(headers, "x-slack-signature"), "x-slack-request-timestamp": Number(one(headers, "x-slack-request-timestamp")) },
        });
        return true;
      case "twilio":
        return twilio.validateRequestWithBody(secret, one(headers, "x-twilio-signature"), url, body.toString("utf8"));
    }
  } catch {
    return false;
  }
}

/**
 * The headers the scheme's owner signs `body` with, at `timestamp` (Unix seconds), for a JSON
 * body sent to `url` (Twilio: `url` must already carry `bodySHA256`, see twilioUrl).
 */
export async function ownerSigned(
  scheme: SchemeName,
  secret: string,
  body: Buffer,
  options: { url?: string; timestamp?: number } = {},
): Promise<Record<string, string>> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const text = body.toString("utf8");
  switch (scheme) {
    case "default":
      return { "x-signature": createHmac("sha1", secret).update(body).digest("hex") };
    case "standard": {
      const id = `msg_${randomUUID().replace(/-/g, "")}`;
      return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": new Webhook(secret).sign(id, new Date(timestamp * 1000), text) };
    }
    case "svix": {
      const id = `msg_${randomUUID().replace(/-/g, "")}`;
      return { "svix-id": id, "svix-timestamp": String(timestamp), "svix-signature": new Svix(secret).sign(id, new Date(timestamp * 1000), text) };
    }
    case "github":
      return { "x-github-event": "push", "x-github-delivery": randomUUID(), "x-hub-signature-256": await githubSign(secret, text) };
    case "stripe":
      return { "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload: text, secret, timestamp }) };
    case "shopify":
      return {
        "x-shopify-topic": "orders/create",
        "x-shopify-webhook-id": randomUUID(),
        "x-shopify-hmac-sha256": createHmac("sha256", secret).update(body).digest("base64"),
      };
    case "slack":
      // Bolt has no signer: Slack's documented computation (its published example is reproduced in test/unit/signing/slack.test.ts).
      return {
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature": `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${text}`).digest("hex")}`,
      };
    case "twilio":
      return { "x-twilio-signature": twilio.getExpectedTwilioSignature(secret, options.url ?? "", {}) };
  }
}

/** Twilio sends a JSON body to the URL with its SHA-256 in `bodySHA256`, and signs that URL. */
export function twilioUrl(url: string, body: Buffer): string {
  return `${url}${url.includes("?") ? "&" : "?"}bodySHA256=${twilio.getExpectedBodyHash(body.toString("utf8"))}`;
}

/** The schemes that sign a timestamp (a stale one is refused). */
export const TIMESTAMPED: readonly SchemeName[] = ["standard", "svix", "stripe", "slack"];

/** The message id header of a scheme that has one. */
export const ID_HEADER: Partial<Record<SchemeName, string>> = {
  standard: "webhook-id",
  svix: "svix-id",
  github: "x-github-delivery",
  shopify: "x-shopify-webhook-id",
};

/** The signed timestamp a request carries (Stripe's `t=` part), or undefined. */
export function timestampOf(scheme: SchemeName, headers: JudgedRequest["headers"]): number | undefined {
  const value =
    scheme === "stripe"
      ? /(?:^|,)t=(\d+)/.exec(one(headers, "stripe-signature"))?.[1]
      : one(headers, { standard: "webhook-timestamp", svix: "svix-timestamp", slack: "x-slack-request-timestamp" }[scheme as string] ?? "");
  return value === undefined || value === "" ? undefined : Number(value);
}

function stringHeaders(headers: JudgedRequest["headers"]): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, one(headers, name)]));
}

function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The body with one byte changed: the first letter of its `userId` in the other case (still the same JSON shape). */
export function withChangedByte(body: Buffer): Buffer {
  const copy = Buffer.from(body);
  const at = copy.indexOf('"userId":"') + '"userId":"'.length;
  if (at < '"userId":"'.length) throw new Error("the body has no userId to change");
  copy[at] = (copy[at] as number) ^ 0x20;
  return copy;
}
