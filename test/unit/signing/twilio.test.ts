import twilio from "twilio";
import { describe, expect, it } from "vitest";
import { recogniseSchemes } from "../../../src/signing/recognise.js";
import { BODIES, changedByte, headerOf, ourSign, ourVerify } from "../../helpers/schemes.js";

// Judge: twilio@6.3.1, Twilio's own library: validateRequest (form bodies), validateRequestWithBody
// (JSON bodies, bodySHA256 in the URL); getExpectedTwilioSignature is its signer.
const TOKEN = "12345";
const OTHER = "67890";
const URL_ = "https://mycompany.com/myapp.php?foo=1&bar=2";
const FORM = "application/x-www-form-urlencoded";
// A form as Twilio posts it, with a repeated name and non-ASCII text (percent-encoded UTF-8).
const FORM_BODY = Buffer.from(
  "CallSid=CA1234567890ABCDE&Caller=%2B14158675310&Digits=1234&From=%2B14158675310&To=%2B18005551212&Body=Gr%C3%BC%C3%9Fe+%E2%9C%93&Tag=b&Tag=a",
);

/** The form's parameters as Express hands them to Twilio's validator: repeated names as arrays. */
function params(body: Buffer): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(body.toString("utf8"))) {
    const had = out[name];
    out[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return out;
}

describe("twilio: what we sign, twilio validates", () => {
  it("a form: the URL and the sorted parameters", () => {
    const signed = ourSign("twilio", [TOKEN], { body: FORM_BODY, id: "", timestamp: 0, url: URL_, contentType: FORM });
    expect(signed.url).toBe(URL_);
    const signature = headerOf(signed.headers, "X-Twilio-Signature");
    expect(twilio.validateRequest(TOKEN, signature, URL_, params(FORM_BODY))).toBe(true);
    expect(twilio.validateRequest(TOKEN, signature, URL_, params(changedByte(FORM_BODY, 3)))).toBe(false);
    expect(twilio.validateRequest(TOKEN, signature, "https://mycompany.com/myapp.php?foo=1&bar=3", params(FORM_BODY))).toBe(false);
  });

  it.each(Object.entries(BODIES))("a %s JSON body: bodySHA256 added to the URL", (_name, body) => {
    const signed = ourSign("twilio", [TOKEN], { body, id: "", timestamp: 0, url: URL_, contentType: "application/json" });
    expect(signed.url).toMatch(/^https:\/\/mycompany\.com\/myapp\.php\?foo=1&bar=2&bodySHA256=[0-9a-f]{64}$/);
    const signature = headerOf(signed.headers, "X-Twilio-Signature");
    expect(twilio.validateRequestWithBody(TOKEN, signature, signed.url as string, body.toString("utf8"))).toBe(true);
    expect(twilio.validateRequestWithBody(TOKEN, signature, signed.url as string, changedByte(body).toString("utf8"))).toBe(false);
  });

  it("signs with the first token only", () => {
    const signed = ourSign("twilio", [TOKEN, OTHER], { body: FORM_BODY, id: "", timestamp: 0, url: URL_, contentType: FORM });
    expect(twilio.validateRequest(OTHER, headerOf(signed.headers, "X-Twilio-Signature"), URL_, params(FORM_BODY))).toBe(false);
  });

  it("needs an absolute URL", () => {
    expect(() => ourSign("twilio", [TOKEN], { body: "{}", id: "", timestamp: 0 })).toThrow(/signs the URL: give the full URL/);
    expect(() => ourSign("twilio", [TOKEN], { body: "{}", id: "", timestamp: 0, url: "/myapp.php" })).toThrow(/signs the full URL/);
  });
});

describe("twilio: what twilio signs, we verify", () => {
  it("a form, with the URL it was sent to", () => {
    const headers = { "x-twilio-signature": twilio.getExpectedTwilioSignature(TOKEN, URL_, params(FORM_BODY)), "content-type": FORM };
    expect(ourVerify("twilio", [OTHER, TOKEN], { headers, body: FORM_BODY, url: URL_ })).toMatchObject({ ok: true, scheme: "twilio", secretIndex: 1 });
    // With the default port, as a proxy may present it: Twilio's validator tries both, so do we.
    expect(ourVerify("twilio", [TOKEN], { headers, body: FORM_BODY, url: "https://mycompany.com:443/myapp.php?foo=1&bar=2" })).toMatchObject({ ok: true });
  });

  it("a JSON body signed through bodySHA256", () => {
    const body = BODIES.nonAscii;
    const url = `${URL_}&bodySHA256=${twilio.getExpectedBodyHash(body.toString("utf8"))}`;
    const headers = { "x-twilio-signature": twilio.getExpectedTwilioSignature(TOKEN, url, {}), "content-type": "application/json" };
    expect(ourVerify("twilio", [TOKEN], { headers, body, url })).toMatchObject({ ok: true });
    const changed = ourVerify("twilio", [TOKEN], { headers, body: changedByte(body), url });
    expect(changed).toMatchObject({ ok: false, reason: "body-hash", header: null, part: "bodySHA256" });
    expect(ourVerify("twilio", [TOKEN], { headers, body, url: URL_ })).toMatchObject({ ok: false, reason: "malformed", part: "bodySHA256" });
  });

  it("refuses a changed parameter, a wrong token, another URL, and no URL at all", () => {
    const headers = { "x-twilio-signature": twilio.getExpectedTwilioSignature(TOKEN, URL_, params(FORM_BODY)), "content-type": FORM };
    expect(ourVerify("twilio", [TOKEN], { headers, body: changedByte(FORM_BODY, 3), url: URL_ })).toMatchObject({ ok: false, reason: "mismatch" });
    const wrong = ourVerify("twilio", [OTHER], { headers, body: FORM_BODY, url: URL_ });
    expect(wrong).toMatchObject({ ok: false, reason: "mismatch", header: "X-Twilio-Signature", expectedLength: 28, gotLengths: [28] });
    expect(ourVerify("twilio", [TOKEN], { headers, body: FORM_BODY, url: "http://127.0.0.1:8080/myapp.php?foo=1&bar=2" })).toMatchObject({
      ok: false,
      reason: "mismatch",
    });
    expect(ourVerify("twilio", [TOKEN], { headers, body: FORM_BODY })).toMatchObject({ ok: false, reason: "no-url", header: null });
  });

  it("is recognised by X-Twilio-Signature", () => {
    expect(recogniseSchemes({ "x-twilio-signature": "abc=" })).toEqual(["twilio"]);
  });
});
