import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildExamples } from "../../src/messages/examples.js";
import { checkMessage } from "../../src/messages/check.js";
import { MESSAGE_TYPES } from "../../src/messages/schemas.js";
import { checkShape } from "../../src/messages/check-fast.js";
import { judgeRequest } from "../../src/receiver/verdict.js";

// No signature header of any scheme: the message names every header looked for (docs/schemes.md#recognition).
const MISSING_SIGNATURE =
  "missing X-Signature header (nor any other scheme's: looked for webhook-signature, svix-signature, X-Hub-Signature-256, Stripe-Signature, X-Shopify-Hmac-Sha256, X-Slack-Signature, X-Twilio-Signature)";

const SECRET = "s3cret";
// Computed independently of src/signing/x-signature.ts.
const hmac = (body: string | Buffer, secret = SECRET) => createHmac("sha1", secret).update(body).digest("hex");
const track = JSON.stringify({
  version: 1,
  type: "track",
  userId: "u1",
  event: "Signed Up",
  properties: { plan: "pro" },
  timestamp: "2024-01-01T00:00:00.000Z",
});

describe("judgeRequest", () => {
  it("accepts a body signed with HMAC-SHA1 of the raw bytes", () => {
    const v = judgeRequest(Buffer.from(track), { "x-signature": hmac(track) }, { secret: SECRET });
    expect(v).toMatchObject({
      signatureValid: true,
      signatureError: null,
      type: "track",
      userId: "u1",
      name: "Signed Up",
      shapeErrors: [],
      valid: true,
      size: track.length,
    });
  });

  it("rejects a wrong signature and a missing one, with a reason", () => {
    const wrong = judgeRequest(Buffer.from(track), { "x-signature": hmac(track, "other") }, { secret: SECRET });
    expect(wrong).toMatchObject({ signatureValid: false, signatureError: "X-Signature does not match the body", valid: false });
    const missing = judgeRequest(Buffer.from(track), {}, { secret: SECRET });
    expect(missing).toMatchObject({ signatureValid: false, signatureError: MISSING_SIGNATURE, valid: false });
  });

  it("verifies the bytes as received, not a re-serialization", () => {
    const spaced = track.replace(/,/g, ", ");
    expect(judgeRequest(Buffer.from(spaced), { "x-signature": hmac(spaced) }, { secret: SECRET }).signatureValid).toBe(true);
    expect(judgeRequest(Buffer.from(spaced), { "x-signature": hmac(track) }, { secret: SECRET }).signatureValid).toBe(false);
  });

  it("marks requests unsigned without a secret, and they stay valid", () => {
    const v = judgeRequest(Buffer.from(track), { "x-signature": "whatever" });
    expect(v).toMatchObject({ signatureValid: null, valid: true });
  });

  it("reports shape errors by key; the signature verdict is kept apart", () => {
    const body = JSON.stringify({ version: 1, type: "track", userId: "u1", properties: {}, timestamp: "yesterday" });
    const v = judgeRequest(Buffer.from(body), { "x-signature": hmac(body) }, { secret: SECRET });
    expect(v.signatureValid).toBe(true);
    expect(v.valid).toBe(false);
    expect(v.shapeErrors.map((e) => e.key).sort()).toEqual(["event", "timestamp"]);
    expect(v.shapeErrors.find((e) => e.key === "event")?.message).toBe('missing required key "event"');
  });

  it("passes the real service's common fields even under strict; other keys are warnings, errors under strict", () => {
    const body = JSON.stringify({ ...JSON.parse(track), messageId: "m1", integrations: {}, evnt: "typo", _metadata: {} });
    const loose = judgeRequest(Buffer.from(body), {});
    expect(loose.valid).toBe(true);
    expect(loose.shapeWarnings.map((w) => w.key)).toEqual(["evnt", "_metadata"]);
    const strict = judgeRequest(Buffer.from(body), {}, { strict: true });
    expect(strict.valid).toBe(false);
    expect(strict.shapeErrors.map((e) => e.key)).toEqual(["evnt", "_metadata"]);
  });

  it("treats non-JSON and non-UTF-8 bodies as invalid, and an empty one under --strict (without it: no data)", () => {
    expect(judgeRequest(Buffer.from("{oops"), {}).shapeErrors[0]).toMatchObject({ key: "(body)", message: expect.stringContaining("not JSON") });
    expect(judgeRequest(Buffer.alloc(0), {}, { strict: true }).shapeErrors[0]?.message).toMatch(/^the body is empty/);
    const latin1 = Buffer.from('{"type":"caf\xe9"}', "latin1");
    const v = judgeRequest(latin1, {});
    expect(v).toMatchObject({ text: null, valid: false });
    expect(v.shapeErrors[0]?.message).toContain("UTF-8");
  });

  it("accepts both alias key styles and reads the user from them", () => {
    for (const aliasKeys of ["spec", "camel"] as const) {
      const [alias] = buildExamples(["alias"], { aliasKeys, userId: "new-id", seed: 1 });
      const v = judgeRequest(Buffer.from(JSON.stringify(alias)), {});
      expect(v).toMatchObject({ valid: true, type: "alias", userId: "new-id" });
    }
  });

  it("gives a failed signature a diagnosis when it can tell", () => {
    const v = judgeRequest(Buffer.from(track), { "x-signature": hmac(track).toUpperCase() }, { secret: SECRET });
    expect(v.diagnosis?.cause).toBe("uppercase");
  });
});

describe("checkShape (the fast path) agrees with checkMessage", () => {
  const base = buildExamples(MESSAGE_TYPES, { seed: 3, now: new Date("2024-02-29T12:00:00.000Z") }) as unknown as Record<string, unknown>[];
  const variants: unknown[] = [null, [], "x", 1, {}, { type: "constructor" }, { type: "__proto__" }, { type: "nope" }];
  for (const message of base) {
    variants.push(message, { ...message, anonymousId: "a1" }, { ...message, extra: true });
    for (const key of Object.keys(message)) {
      const { [key]: _removed, ...rest } = message;
      variants.push(rest);
      for (const value of [
        null,
        1,
        2,
        0,
        1.5,
        2 ** 53,
        "",
        "x",
        {},
        [],
        true,
        "2024-02-30T00:00:00.000Z",
        "2023-02-29T00:00:00.000Z",
        "2024-01-01T24:00:00.000Z",
        "2024-01-01T00:00:00Z",
        "2009-11-10T23:00:00+0000",
        "2009-11-10T23:00:00.5+02:00",
        "2009-11-10T23:00:00+2400",
      ]) {
        variants.push({ ...message, [key]: value });
      }
    }
    if (typeof message["userId"] === "string") {
      const { userId: _u, ...anonymous } = message;
      variants.push({ ...anonymous, anonymousId: "a1" }, { ...anonymous, anonymousId: 5 }, { ...anonymous, userId: null, anonymousId: "a1" });
      variants.push({ ...anonymous, userId: null, anonymousId: "" }, { ...anonymous, userId: "", anonymousId: "a" }, { ...message, anonymousId: null });
      variants.push({ ...message, messageId: "m", integrations: {}, sentAt: "2024-01-01T00:00:00Z", channel: "server" }, { ...message, sentAt: "nope" });
    }
  }

  it(`on ${variants.length} valid and broken messages, loose and strict`, () => {
    for (const value of variants) {
      for (const strict of [false, true]) {
        expect(checkShape(value, strict), JSON.stringify(value)).toEqual(checkMessage(value, { strict }));
      }
    }
  });
});
