import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { recogniseSchemes } from "../../../src/signing/recognise.js";
import { BODIES, changedByte, headerOf, nowSeconds, ourSign, ourVerify, received } from "../../helpers/schemes.js";

// Judge: stripe@23.1.0, Stripe's own Node.js library: webhooks.constructEvent verifies,
// webhooks.generateTestHeaderString signs.
const SECRET = "whsec_test_secret_as_stripe_shows_it";
const OLD_SECRET = "whsec_the_secret_before_rolling";
const webhooks = Stripe.webhooks;

describe("stripe: what we sign, constructEvent verifies", () => {
  it.each(Object.entries(BODIES))("%s body", (_name, body) => {
    const signed = ourSign("stripe", [SECRET], { body, id: "", timestamp: nowSeconds() });
    expect(signed.headers.map(([name]) => name)).toEqual(["Stripe-Signature"]);
    const header = headerOf(signed.headers, "Stripe-Signature");
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(webhooks.constructEvent(body, header, SECRET)).toEqual(JSON.parse(body.toString("utf8")));
    expect(() => webhooks.constructEvent(changedByte(body), header, SECRET)).toThrow(/No signatures found matching/);
  });

  it("uses the whsec_ secret as it is, not decoded", () => {
    const signed = ourSign("stripe", ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], { body: BODIES.ascii, id: "", timestamp: nowSeconds() });
    expect(() => webhooks.constructEvent(BODIES.ascii, headerOf(signed.headers, "Stripe-Signature"), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).not.toThrow();
  });

  it("signs with each secret (rolling a secret): a v1 per secret", () => {
    const signed = ourSign("stripe", [SECRET, OLD_SECRET], { body: BODIES.nonAscii, id: "", timestamp: nowSeconds() });
    const header = headerOf(signed.headers, "Stripe-Signature");
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const secret of [SECRET, OLD_SECRET]) expect(() => webhooks.constructEvent(BODIES.nonAscii, header, secret)).not.toThrow();
  });

  it("a timestamp older than 300 s is refused by the owner too", () => {
    const signed = ourSign("stripe", [SECRET], { body: BODIES.ascii, id: "", timestamp: nowSeconds() - 301 });
    expect(() => webhooks.constructEvent(BODIES.ascii, headerOf(signed.headers, "Stripe-Signature"), SECRET)).toThrow(/tolerance/);
  });
});

describe("stripe: what generateTestHeaderString signs, we verify", () => {
  const ownerSigned = (body: Buffer, timestamp = nowSeconds(), secret = SECRET) => ({
    headers: { "stripe-signature": webhooks.generateTestHeaderString({ payload: body.toString("utf8"), secret, timestamp }) },
    body,
  });

  it.each(Object.entries(BODIES))("%s body", (_name, body) => {
    const result = ourVerify("stripe", [SECRET], ownerSigned(body));
    expect(result).toMatchObject({ ok: true, scheme: "stripe", header: "Stripe-Signature", secretIndex: 0, id: undefined });
  });

  it("names which secret matched", () => {
    expect(ourVerify("stripe", [SECRET, OLD_SECRET], ownerSigned(BODIES.ascii, nowSeconds(), OLD_SECRET))).toMatchObject({ ok: true, secretIndex: 1 });
  });

  it("refuses a changed byte and a wrong secret as mismatches", () => {
    const request = ownerSigned(BODIES.nonAscii);
    expect(ourVerify("stripe", [SECRET], { ...request, body: changedByte(request.body) })).toMatchObject({ ok: false, reason: "mismatch", part: "v1=" });
    expect(ourVerify("stripe", [OLD_SECRET], request)).toMatchObject({ ok: false, reason: "mismatch", secretsTried: 1 });
  });

  it("refuses a timestamp older than 300 s, in the t= part, but not one ahead (as Stripe's verifier)", () => {
    const stale = ourVerify("stripe", [SECRET], ownerSigned(BODIES.ascii, nowSeconds() - 301));
    expect(stale).toMatchObject({ ok: false, reason: "stale", header: "Stripe-Signature", part: "t=", toleranceSeconds: 300 });
    expect(!stale.ok && stale.skewSeconds).toBeGreaterThanOrEqual(301);
    const ahead = ourVerify("stripe", [SECRET], ownerSigned(BODIES.ascii, nowSeconds() + 3_600));
    expect(ahead).toMatchObject({ ok: true });
    expect(ahead.ok && ahead.skewSeconds).toBeLessThanOrEqual(-3_599);
  });

  it("refuses a header without t= or v1=", () => {
    const { body } = ownerSigned(BODIES.ascii);
    expect(ourVerify("stripe", [SECRET], { headers: { "stripe-signature": "v1=abc" }, body })).toMatchObject({ ok: false, reason: "malformed", part: "t=" });
    expect(ourVerify("stripe", [SECRET], { headers: { "stripe-signature": "t=1,v0=abc" }, body })).toMatchObject({
      ok: false,
      reason: "malformed",
      part: "v1=",
    });
  });

  it("is recognised by Stripe-Signature", () => {
    expect(recogniseSchemes(received([["Stripe-Signature", "t=1,v1=00"]]))).toEqual(["stripe"]);
  });
});
