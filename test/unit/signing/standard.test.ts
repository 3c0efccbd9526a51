import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { SecretFormatError } from "../../../src/errors.js";
import { recogniseSchemes } from "../../../src/signing/recognise.js";
import { BODIES, changedByte, headerOf, nowSeconds, ourSign, ourVerify, received } from "../../helpers/schemes.js";

// Judge: standardwebhooks@1.1.1, the Standard Webhooks project's own JavaScript library.
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD_SECRET = `whsec_${Buffer.from("the secret before the rotation!!").toString("base64")}`;
const ID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";

describe("standard: what we sign, standardwebhooks verifies", () => {
  it.each(Object.entries(BODIES))("%s body", (_name, body) => {
    const signed = ourSign("standard", [SECRET], { body, id: ID, timestamp: nowSeconds() });
    expect(signed.headers.map(([name]) => name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(new Webhook(SECRET).verify(body, received(signed.headers))).toEqual(JSON.parse(body.toString("utf8")));
  });

  it("signs with each secret (rotation): the owner accepts the header under either", () => {
    const signed = ourSign("standard", [SECRET, OLD_SECRET], { body: BODIES.ascii, id: ID, timestamp: nowSeconds() });
    expect(headerOf(signed.headers, "webhook-signature").split(" ")).toHaveLength(2);
    for (const secret of [SECRET, OLD_SECRET]) expect(() => new Webhook(secret).verify(BODIES.ascii, received(signed.headers))).not.toThrow();
  });

  it("a stale timestamp we were asked to sign is refused by the owner too", () => {
    const signed = ourSign("standard", [SECRET], { body: BODIES.ascii, id: ID, timestamp: nowSeconds() - 301 });
    expect(() => new Webhook(SECRET).verify(BODIES.ascii, received(signed.headers))).toThrow(/too old/);
  });
});

describe("standard: what standardwebhooks signs, we verify", () => {
  const ownerSigned = (body: Buffer, at = new Date(), secret = SECRET) => {
    const timestamp = Math.floor(at.getTime() / 1000);
    const headers = { "webhook-id": ID, "webhook-timestamp": String(timestamp), "webhook-signature": new Webhook(secret).sign(ID, at, body) };
    return { headers, body };
  };

  it.each(Object.entries(BODIES))("%s body, with the id, timestamp and skew", (_name, body) => {
    const request = ownerSigned(body);
    const result = ourVerify("standard", [SECRET], { ...request, now: Date.now() + 2_000 });
    expect(result).toMatchObject({ ok: true, scheme: "standard", header: "webhook-signature", secretIndex: 0, id: ID });
    expect(result.ok && result.skewSeconds).toBeGreaterThanOrEqual(1);
  });

  it("names which of several secrets matched", () => {
    const request = ownerSigned(BODIES.ascii, new Date(), OLD_SECRET);
    expect(ourVerify("standard", [SECRET, OLD_SECRET], request)).toMatchObject({ ok: true, secretIndex: 1 });
  });

  it("a changed byte: refused as a mismatch of the right length", () => {
    const request = ownerSigned(BODIES.nonAscii);
    const result = ourVerify("standard", [SECRET], { ...request, body: changedByte(request.body) });
    expect(result).toMatchObject({ ok: false, reason: "mismatch", header: "webhook-signature", part: "v1,", expectedLength: 44, gotLengths: [44] });
    expect(result.ok || result.message).toMatch(
      /the length is right, 44 characters of base64, so the body, the secret or the signed id\.timestamp\.body differ/,
    );
    // The owner refuses it as well: the judge agrees with the verdict.
    expect(() => new Webhook(SECRET).verify(changedByte(request.body), request.headers)).toThrow(WebhookVerificationError);
  });

  it("a wrong secret: refused, saying how many secrets were tried", () => {
    const result = ourVerify("standard", [OLD_SECRET, `whsec_${Buffer.alloc(24, 7).toString("base64")}`], ownerSigned(BODIES.ascii));
    expect(result).toMatchObject({ ok: false, reason: "mismatch", secretsTried: 2 });
    expect(result.ok || result.message).toMatch(/^webhook-signature: the signature does not match under any of 2 secrets \(the length is right, 44/);
  });

  it("a stale timestamp: the signature matches, refused as stale by how much, either way", () => {
    const old = ownerSigned(BODIES.ascii, new Date(Date.now() - 400_000));
    expect(ourVerify("standard", [SECRET], old)).toMatchObject({ ok: false, reason: "stale", header: "webhook-timestamp", toleranceSeconds: 300 });
    const result = ourVerify("standard", [SECRET], old);
    expect(!result.ok && result.skewSeconds).toBeGreaterThanOrEqual(400);
    expect(result.ok || result.message).toMatch(/the signature matches, but the timestamp is 4\d\d s old, beyond the 300 s tolerance/);
    const ahead = ownerSigned(BODIES.ascii, new Date(Date.now() + 400_000));
    expect(ourVerify("standard", [SECRET], ahead)).toMatchObject({ ok: false, reason: "stale" });
    expect(ourVerify("standard", [SECRET], ahead, { toleranceSeconds: 600 })).toMatchObject({ ok: true });
  });

  it("a missing id or malformed timestamp names the header", () => {
    const { headers, body } = ownerSigned(BODIES.ascii);
    const { "webhook-id": _id, ...withoutId } = headers;
    expect(ourVerify("standard", [SECRET], { headers: withoutId, body })).toMatchObject({ ok: false, reason: "missing", header: "webhook-id" });
    const bad = { ...headers, "webhook-timestamp": "soon" };
    expect(ourVerify("standard", [SECRET], { headers: bad, body })).toMatchObject({
      ok: false,
      reason: "malformed",
      header: "webhook-timestamp",
      part: "timestamp",
    });
    const asymmetric = { ...headers, "webhook-signature": "v1a,aGVsbG8=" };
    expect(ourVerify("standard", [SECRET], { headers: asymmetric, body })).toMatchObject({ ok: false, reason: "malformed", part: "v1," });
  });
});

describe("standard: secrets and recognition", () => {
  it("decodes the base64 after whsec_, as the owner does (also without the prefix)", () => {
    const signed = ourSign("standard", [SECRET.slice("whsec_".length)], { body: BODIES.ascii, id: ID, timestamp: nowSeconds() });
    expect(() => new Webhook(SECRET).verify(BODIES.ascii, received(signed.headers))).not.toThrow();
  });

  it.each([
    ["whsec_not base64!", /at position 4 of 11 after whsec_/],
    ["whsec_", /nothing after whsec_/],
    ["whsec_abc", /3 characters, which is not whole base64/],
  ])("refuses %j as a secret, saying what is wrong without printing it", (secret, reason) => {
    const error = (() => {
      try {
        ourSign("standard", ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", secret], { body: "{}", id: ID, timestamp: 1 });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(SecretFormatError);
    expect((error as SecretFormatError).code).toBe("E_SECRET");
    expect((error as SecretFormatError).index).toBe(1);
    expect((error as Error).message).toMatch(/^secret 2 of 2 is not a standard secret: it must be whsec_ followed by base64/);
    expect((error as Error).message).toMatch(reason);
    if (secret.length > 8) expect((error as Error).message).not.toContain(secret);
  });

  it("refuses an id with a dot, which the spec forbids", () => {
    expect(() => ourSign("standard", [SECRET], { body: "{}", id: "msg.1", timestamp: 1 })).toThrow(/must not contain a dot/);
  });

  it("is recognised by webhook-signature", () => {
    const signed = ourSign("standard", [SECRET], { body: BODIES.ascii, id: ID, timestamp: nowSeconds() });
    expect(recogniseSchemes(received(signed.headers))).toEqual(["standard"]);
  });
});
