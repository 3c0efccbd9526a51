import { afterEach, describe, expect, it } from "vitest";
import { SCHEME_NAMES, type SchemeName } from "../../src/signing/schemes.js";
import { startReceiver, type TestReceiver } from "../../src/testing.js";
import { VirtualClock } from "../../src/util/clock.js";
import { ANY_SCHEME_SECRET, OTHER_SECRET, ownerSigned, TIMESTAMPED, twilioUrl, withChangedByte } from "../helpers/scheme-judges.js";

// `startReceiver` (webhook-cli/testing) against requests each scheme's owner signed: listen's one
// verifier in a test's own process, its verdict naming the scheme, the secret and the skew.
const BODY = Buffer.from(JSON.stringify({ version: 1, type: "identify", userId: "user_1", traits: { name: "Zoë" }, timestamp: "2024-01-01T00:00:00.000Z" }));
const receivers: TestReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(options: Parameters<typeof startReceiver>[0]): Promise<TestReceiver> {
  const started = await startReceiver(options);
  receivers.push(started);
  return started;
}

async function post(to: TestReceiver, scheme: SchemeName, options: { secret?: string; sentBody?: Buffer; timestamp?: number } = {}): Promise<number> {
  const url = scheme === "twilio" ? twilioUrl(`${to.url}/hook`, BODY) : `${to.url}/hook`;
  const headers = await ownerSigned(scheme, options.secret ?? ANY_SCHEME_SECRET, BODY, { url, ...(options.timestamp ? { timestamp: options.timestamp } : {}) });
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: options.sentBody ?? BODY });
  await response.arrayBuffer();
  return response.status;
}

describe("startReceiver({ scheme, secret }): the owner's signature verifies; a changed byte, a wrong secret, a stale timestamp do not", () => {
  it.each(SCHEME_NAMES)("%s", async (scheme) => {
    const at = await receiver({ scheme, secret: ANY_SCHEME_SECRET });
    expect(await post(at, scheme)).toBe(200);
    const [ok] = await at.waitFor({ verdict: "valid" });
    expect(ok?.verdict).toMatchObject({ signatureValid: true, signatureScheme: scheme, signatureSecret: 1, signatureReason: null });
    if (TIMESTAMPED.includes(scheme)) expect(Math.abs(ok?.verdict.skewSeconds ?? 99)).toBeLessThan(5);
    else expect(ok?.verdict.skewSeconds).toBeNull();
    expect(await post(at, scheme, { sentBody: withChangedByte(BODY) })).toBe(401);
    expect(await post(at, scheme, { secret: OTHER_SECRET })).toBe(401);
    if (TIMESTAMPED.includes(scheme)) expect(await post(at, scheme, { timestamp: Math.floor(Date.now() / 1000) - 400 })).toBe(401);
    const refused = await at.waitFor({ verdict: "invalid" }, { count: TIMESTAMPED.includes(scheme) ? 3 : 2 });
    const reasons = refused.map((request) => request.verdict.signatureReason);
    expect(reasons).toEqual([scheme === "twilio" ? "body-hash" : "mismatch", "mismatch", ...(TIMESTAMPED.includes(scheme) ? ["stale"] : [])]);
    expect(refused.every((request) => request.verdict.signatureScheme === scheme)).toBe(true);
    if (TIMESTAMPED.includes(scheme)) {
      expect(refused[2]?.verdict.skewSeconds).toBeGreaterThanOrEqual(400);
      expect(refused[2]?.verdict.signatureError).toMatch(/the timestamp is 4\d\d s old, beyond the 300 s tolerance/);
    }
  });

  it("recognises each scheme without one named, takes several secrets and says which matched", async () => {
    const at = await receiver({ secrets: [OTHER_SECRET, ANY_SCHEME_SECRET] });
    for (const scheme of SCHEME_NAMES) expect([scheme, await post(at, scheme)]).toEqual([scheme, 200]);
    const requests = await at.waitFor({ verdict: "valid" }, { count: SCHEME_NAMES.length });
    expect(requests.map((request) => [request.verdict.signatureScheme, request.verdict.signatureSecret])).toEqual(SCHEME_NAMES.map((scheme) => [scheme, 2]));
  });

  it("slack's published example verifies at its own time (the receiver's clock), and toleranceSeconds bounds the skew", async () => {
    // Slack's "Verifying requests from Slack" example: signed 1531420618 with 8f742231b10e8888abcd99yyyzzz85a5.
    const body =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA" +
      "&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554" +
      "%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const headers = {
      "content-type": "application/x-www-form-urlencoded",
      "x-slack-request-timestamp": "1531420618",
      "x-slack-signature": "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
    };
    const clock = new VirtualClock((1531420618 + 20) * 1000);
    const at = await receiver({ scheme: "slack", secret: "8f742231b10e8888abcd99yyyzzz85a5", clock, toleranceSeconds: 10 });
    expect((await fetch(`${at.url}/slack/commands`, { method: "POST", headers, body })).status).toBe(401);
    const loose = await receiver({ scheme: "slack", secret: "8f742231b10e8888abcd99yyyzzz85a5", clock });
    expect((await fetch(`${loose.url}/slack/commands`, { method: "POST", headers, body })).status).toBe(200);
    const [tight] = await at.waitFor({ verdict: "any" });
    expect(tight?.verdict).toMatchObject({ signatureReason: "stale", skewSeconds: 20 });
    const [ok] = await loose.waitFor({ verdict: "any" });
    // The body is a form, not a message: the signature verified, the shape did not (not JSON).
    expect(ok?.verdict).toMatchObject({ signatureValid: true, signatureScheme: "slack", skewSeconds: 20 });
  });

  it("twilio: publicUrl stands for the URL a tunnel forwards from", async () => {
    const publicUrl = "https://abc.example.app";
    const at = await receiver({ scheme: "twilio", secret: "token", publicUrl });
    const signedFor = twilioUrl(`${publicUrl}/voice`, BODY);
    const headers = await ownerSigned("twilio", "token", BODY, { url: signedFor });
    const sent = await fetch(`${at.url}/voice${signedFor.slice(signedFor.indexOf("?"))}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: BODY,
    });
    expect(sent.status).toBe(200);
  });

  it("an unknown scheme, or a secret the scheme cannot take, rejects before listening", async () => {
    await expect(startReceiver({ scheme: "stirpe" })).rejects.toThrow(/unknown scheme "stirpe" \(Did you mean stripe\?\)/);
    await expect(startReceiver({ scheme: "svix", secret: "plain text" })).rejects.toMatchObject({ code: "E_SECRET" });
  });
});
