import { verifySlackRequest } from "@slack/bolt";
import { describe, expect, it } from "vitest";
import { recogniseSchemes } from "../../../src/signing/recognise.js";
import { BODIES, changedByte, headerOf, nowSeconds, ourSign, ourVerify } from "../../helpers/schemes.js";

// Judge: @slack/bolt@5.1.0's verifySlackRequest, Slack's own verifier. Bolt has no signer, so the
// other direction is the example Slack publishes in "Verifying requests from Slack".
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const OTHER = "0123456789abcdef0123456789abcdef";
const DOC = {
  timestamp: 1531420618,
  body:
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA" +
    "&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554" +
    "%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
  signature: "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
};

/** Bolt's check, as its receivers call it: the timestamp header as a number. */
function boltVerifies(headers: [string, string][], body: Buffer, secret = SECRET, nowMilliseconds?: number): void {
  verifySlackRequest({
    signingSecret: secret,
    body: body.toString("utf8"),
    headers: {
      "x-slack-signature": headerOf(headers, "X-Slack-Signature"),
      "x-slack-request-timestamp": Number(headerOf(headers, "X-Slack-Request-Timestamp")),
    },
    ...(nowMilliseconds !== undefined ? { nowMilliseconds } : {}),
  });
}

describe("slack: what we sign, Bolt verifies", () => {
  it.each(Object.entries(BODIES))("%s body", (_name, body) => {
    const signed = ourSign("slack", [SECRET], { body, id: "", timestamp: nowSeconds() });
    expect(signed.headers.map(([name]) => name)).toEqual(["X-Slack-Request-Timestamp", "X-Slack-Signature"]);
    expect(() => boltVerifies(signed.headers, body)).not.toThrow();
    expect(() => boltVerifies(signed.headers, changedByte(body))).toThrow(/signature mismatch/);
  });

  it("reproduces Slack's published example", () => {
    const signed = ourSign("slack", [SECRET], { body: DOC.body, id: "", timestamp: DOC.timestamp });
    expect(headerOf(signed.headers, "X-Slack-Signature")).toBe(DOC.signature);
    expect(() => boltVerifies(signed.headers, Buffer.from(DOC.body), SECRET, DOC.timestamp * 1000)).not.toThrow();
  });

  it("signs with the first secret only", () => {
    const signed = ourSign("slack", [SECRET, OTHER], { body: BODIES.ascii, id: "", timestamp: nowSeconds() });
    expect(() => boltVerifies(signed.headers, BODIES.ascii, SECRET)).not.toThrow();
    expect(() => boltVerifies(signed.headers, BODIES.ascii, OTHER)).toThrow(/signature mismatch/);
  });

  it("a timestamp over 5 minutes old is refused by Bolt too", () => {
    const signed = ourSign("slack", [SECRET], { body: BODIES.ascii, id: "", timestamp: nowSeconds() - 301 });
    expect(() => boltVerifies(signed.headers, BODIES.ascii)).toThrow(/stale/);
  });
});

describe("slack: Slack's published example, we verify", () => {
  const headers = { "x-slack-request-timestamp": String(DOC.timestamp), "x-slack-signature": DOC.signature };
  const body = Buffer.from(DOC.body);
  const at = (seconds: number) => seconds * 1000;

  it("accepts it at its time, naming the skew", () => {
    expect(ourVerify("slack", [OTHER, SECRET], { headers, body, now: at(DOC.timestamp + 3) })).toMatchObject({
      ok: true,
      scheme: "slack",
      header: "X-Slack-Signature",
      secretIndex: 1,
      timestamp: DOC.timestamp,
      skewSeconds: 3,
    });
  });

  it("refuses a changed byte and a wrong secret", () => {
    expect(ourVerify("slack", [SECRET], { headers, body: changedByte(body), now: at(DOC.timestamp) })).toMatchObject({
      ok: false,
      reason: "mismatch",
      part: "v0=",
    });
    expect(ourVerify("slack", [OTHER], { headers, body, now: at(DOC.timestamp) })).toMatchObject({ ok: false, reason: "mismatch" });
  });

  it("refuses it 5 minutes and a second later as stale, by how much; --tolerance widens the window", () => {
    const result = ourVerify("slack", [SECRET], { headers, body, now: at(DOC.timestamp + 301) });
    expect(result).toMatchObject({ ok: false, reason: "stale", header: "X-Slack-Request-Timestamp", skewSeconds: 301, toleranceSeconds: 300 });
    expect(result.ok || result.message).toBe(
      "X-Slack-Request-Timestamp: the signature matches, but the timestamp is 301 s old, beyond the 300 s tolerance (clock skew or a replayed request)",
    );
    expect(ourVerify("slack", [SECRET], { headers, body, now: at(DOC.timestamp + 301) }, { toleranceSeconds: 3_600 })).toMatchObject({ ok: true });
  });

  it("a missing timestamp header is named", () => {
    const { "x-slack-request-timestamp": _, ...rest } = headers;
    expect(ourVerify("slack", [SECRET], { headers: rest, body })).toMatchObject({ ok: false, reason: "missing", header: "X-Slack-Request-Timestamp" });
  });

  it("is recognised by X-Slack-Signature", () => {
    expect(recogniseSchemes(headers)).toEqual(["slack"]);
  });
});
