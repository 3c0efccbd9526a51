import { Webhook } from "svix";
import { describe, expect, it } from "vitest";
import { recogniseSchemes } from "../../../src/signing/recognise.js";
import { BODIES, changedByte, headerOf, nowSeconds, ourSign, ourVerify, received } from "../../helpers/schemes.js";

// Judge: svix@2.5.0, Svix's own library (its Webhook verifies svix-* headers).
const SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const OLD_SECRET = `whsec_${Buffer.alloc(32, 0xa5).toString("base64")}`;
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";

describe("svix: what we sign, svix verifies", () => {
  it.each(Object.entries(BODIES))("%s body", (_name, body) => {
    const signed = ourSign("svix", [SECRET], { body, id: ID, timestamp: nowSeconds() });
    expect(signed.headers.map(([name]) => name)).toEqual(["svix-id", "svix-timestamp", "svix-signature"]);
    expect(() => new Webhook(SECRET).verify(body, received(signed.headers))).not.toThrow();
    expect(() => new Webhook(SECRET).verify(changedByte(body), received(signed.headers))).toThrow(/No matching signature/);
  });

  it("signs with each secret (rotation)", () => {
    const signed = ourSign("svix", [SECRET, OLD_SECRET], { body: BODIES.ascii, id: ID, timestamp: nowSeconds() });
    expect(headerOf(signed.headers, "svix-signature")).toMatch(/^v1,\S{44} v1,\S{44}$/);
    for (const secret of [SECRET, OLD_SECRET]) expect(() => new Webhook(secret).verify(BODIES.ascii, received(signed.headers))).not.toThrow();
  });
});

describe("svix: what svix signs, we verify", () => {
  const ownerSigned = (body: Buffer, at = new Date(), secret = SECRET) => ({
    headers: { "svix-id": ID, "svix-timestamp": String(Math.floor(at.getTime() / 1000)), "svix-signature": new Webhook(secret).sign(ID, at, body) },
    body,
  });

  it.each(Object.entries(BODIES))("%s body", (_name, body) => {
    expect(ourVerify("svix", [SECRET], ownerSigned(body))).toMatchObject({ ok: true, scheme: "svix", header: "svix-signature", id: ID, secretIndex: 0 });
  });

  it("names which secret matched", () => {
    expect(ourVerify("svix", [SECRET, OLD_SECRET], ownerSigned(BODIES.nonAscii, new Date(), OLD_SECRET))).toMatchObject({ ok: true, secretIndex: 1 });
  });

  it("refuses a changed byte, a wrong secret and a stale timestamp, each with its reason", () => {
    const request = ownerSigned(BODIES.ascii);
    expect(ourVerify("svix", [SECRET], { ...request, body: changedByte(request.body) })).toMatchObject({
      ok: false,
      reason: "mismatch",
      header: "svix-signature",
    });
    expect(ourVerify("svix", [OLD_SECRET], request)).toMatchObject({ ok: false, reason: "mismatch", secretsTried: 1 });
    const stale = ourVerify("svix", [SECRET], ownerSigned(BODIES.ascii, new Date(Date.now() - 600_000)));
    expect(stale).toMatchObject({ ok: false, reason: "stale", header: "svix-timestamp", toleranceSeconds: 300 });
    expect(!stale.ok && stale.skewSeconds).toBeGreaterThanOrEqual(600);
  });

  it("is recognised by svix-signature, not as standard", () => {
    expect(recogniseSchemes(ownerSigned(BODIES.ascii).headers)).toEqual(["svix"]);
  });
});
