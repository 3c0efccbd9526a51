import { describe, expect, it } from "vitest";
import { SchemeError, SecretFormatError } from "../../../src/errors.js";
import { recogniseSchemes, requestVerifier } from "../../../src/signing/recognise.js";
import { SCHEME_NAMES, SCHEMES, schemeNamed } from "../../../src/signing/schemes.js";
import { BODIES, nowSeconds, ourSign, received } from "../../helpers/schemes.js";

const STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("recognition by headers", () => {
  it("finds no scheme on a request without a signature header", () => {
    expect(recogniseSchemes({ "content-type": "application/json", "webhook-id": "msg_1" })).toEqual([]);
  });

  it("finds each scheme by the signature header its own signer writes", () => {
    for (const name of SCHEME_NAMES) {
      const signed = ourSign(name, [name === "standard" || name === "svix" ? STANDARD_SECRET : "text secret"], {
        body: BODIES.ascii,
        id: "msg_1",
        timestamp: nowSeconds(),
        url: "https://example.com/hook",
      });
      expect(recogniseSchemes(received(signed.headers))).toEqual([name]);
    }
  });

  it("finds both when a sender migrating to Standard Webhooks sends its old header beside the new", () => {
    const old = ourSign("default", ["k"], { body: BODIES.ascii, id: "", timestamp: 0 });
    const standard = ourSign("standard", [STANDARD_SECRET], { body: BODIES.ascii, id: "msg_1", timestamp: nowSeconds() });
    expect(recogniseSchemes(received([...old.headers, ...standard.headers]))).toEqual(["default", "standard"]);
  });
});

describe("requestVerifier", () => {
  const now = Date.now();

  it("with a scheme: verifies that one, and refuses a request without its header", () => {
    const verifier = requestVerifier({ scheme: "github", secrets: ["s"] });
    const signed = ourSign("github", ["s"], { body: BODIES.ascii, id: "d1", timestamp: 0 });
    expect(verifier({ headers: received(signed.headers), body: BODIES.ascii, now })).toMatchObject([{ ok: true, scheme: "github" }]);
    expect(verifier({ headers: { "x-signature": "00" }, body: BODIES.ascii, now })).toMatchObject([
      { ok: false, reason: "missing", header: "X-Hub-Signature-256" },
    ]);
  });

  it("without: one verdict per scheme recognised, each with its own key format (rotation across formats)", () => {
    const verifier = requestVerifier({ secrets: ["plain text secret", STANDARD_SECRET] });
    const old = ourSign("default", ["plain text secret"], { body: BODIES.nonAscii, id: "", timestamp: 0 });
    const standard = ourSign("standard", [STANDARD_SECRET], { body: BODIES.nonAscii, id: "msg_1", timestamp: nowSeconds() });
    const verdicts = verifier({ headers: received([...old.headers, ...standard.headers]), body: BODIES.nonAscii, now });
    expect(verdicts).toMatchObject([
      { ok: true, scheme: "default", secretIndex: 0 },
      { ok: true, scheme: "standard", secretIndex: 1 },
    ]);
  });

  it("without: a recognised scheme no secret fits is refused, saying so", () => {
    const verifier = requestVerifier({ secrets: ["not base64!"] });
    const standard = ourSign("standard", [STANDARD_SECRET], { body: BODIES.ascii, id: "msg_1", timestamp: nowSeconds() });
    const [verdict] = verifier({ headers: received(standard.headers), body: BODIES.ascii, now });
    expect(verdict).toMatchObject({ ok: false, scheme: "standard", reason: "secret", header: "webhook-signature" });
    expect(verdict && !verdict.ok && verdict.message).toMatch(
      /^webhook-signature: no secret given is a standard secret \(the secret is not a standard secret: it must be whsec_/,
    );
  });

  it("without: nothing recognised is one refusal naming the headers looked for", () => {
    const verifier = requestVerifier({ secrets: ["s"] });
    const [verdict] = verifier({ headers: {}, body: BODIES.ascii, now });
    expect(verdict).toMatchObject({ ok: false, scheme: null, reason: "unrecognised" });
    expect(verdict && !verdict.ok && verdict.message).toContain("X-Signature, webhook-signature, svix-signature, X-Hub-Signature-256, Stripe-Signature");
  });

  it("with a scheme whose format refuses a secret: an error before anything is received", () => {
    expect(() => requestVerifier({ scheme: "svix", secrets: ["whsec_%%%"] })).toThrow(SecretFormatError);
    expect(() => requestVerifier({ scheme: "svix", secrets: [] })).toThrow(/needs a secret/);
  });
});

describe("scheme names", () => {
  it("an unknown name is a SchemeError with the closest name and the list", () => {
    expect(() => schemeNamed("stirpe")).toThrow(SchemeError);
    expect(() => schemeNamed("stirpe")).toThrow(
      'unknown scheme "stirpe" (Did you mean stripe?); the schemes are default, standard, svix, github, stripe, shopify, slack, twilio',
    );
    expect(() => schemeNamed("hmac")).toThrow(/^unknown scheme "hmac"; the schemes are/);
    expect(() => schemeNamed("toString")).toThrow(SchemeError);
  });

  it("every entry is named by its key, and list-carrying schemes are exactly those with a separator", () => {
    for (const name of SCHEME_NAMES) {
      const scheme = SCHEMES[name];
      expect(scheme.name).toBe(name);
      expect(scheme.signsEachSecret).toBe(scheme.signature.separator !== undefined);
    }
  });
});
