import { createHmac } from "node:crypto";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as Svix } from "svix";
import twilio from "twilio";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/setup.js";
import { jsonEvents, runInProcess } from "../helpers/run-cli.js";

// `verify`, run in process as a user runs it, on requests the schemes' owners' own signers made.
const { dir, file } = tempDir("webhook-cli-verify-");
const BODY = '{"type":"track","event":"Café ☕","properties":{"total":42}}';
file("body.json", BODY);
const STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const AT = new Date("2026-01-01T00:00:00Z");
const T = Math.floor(AT.getTime() / 1000);

const headerArgs = (headers: Record<string, string>): string[] => Object.entries(headers).flatMap(([name, value]) => ["--header", `${name}: ${value}`]);
const verify = (args: string[], input?: string) => runInProcess(["verify", ...args], { cwd: dir, ...(input !== undefined ? { input } : {}) });
const standardHeaders = (secret = STANDARD_SECRET, at = AT) => ({
  "webhook-id": "msg_1",
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": new Webhook(secret).sign("msg_1", at, BODY),
});

describe("webhook-cli verify: what the owners' signers made verifies (exit 0)", () => {
  it("standard, recognised by its headers, with the id and the skew", async () => {
    const result = await verify(["--secret", STANDARD_SECRET, ...headerArgs(standardHeaders()), "--now", "2026-01-01T00:00:03Z", "body.json"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe("verified: standard (webhook-signature); id msg_1; timestamp 1767225600, 3 s old\n");
  });

  it("svix, stripe (generateTestHeaderString) and github (octokit), each named with --scheme", async () => {
    const svix = { "svix-id": "msg_2", "svix-timestamp": String(T), "svix-signature": new Svix(STANDARD_SECRET).sign("msg_2", AT, BODY) };
    expect((await verify(["--scheme", "svix", "--secret", STANDARD_SECRET, ...headerArgs(svix), "--now", AT.toISOString(), "body.json"])).code).toBe(0);
    const stripe = Stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: "whsec_s", timestamp: T });
    const stripeRun = await verify(["--scheme", "stripe", "--secret", "whsec_s", "-H", `Stripe-Signature: ${stripe}`, "--now", AT.toISOString(), "body.json"]);
    expect(stripeRun.stdout).toBe("verified: stripe (Stripe-Signature); timestamp 1767225600, 0 s old\n");
    const github = await githubSign("s3cr3t", BODY);
    expect((await verify(["--scheme", "github", "--secret", "s3cr3t", "-H", `X-Hub-Signature-256: ${github}`, "-"], BODY)).stdout).toBe(
      "verified: github (X-Hub-Signature-256)\n",
    );
  });

  it("twilio with --url: a form Twilio's library signed", async () => {
    const url = "https://hooks.example.org/sms";
    const form = "Body=Hi&From=%2B1415";
    const signature = twilio.getExpectedTwilioSignature("tok", url, { Body: "Hi", From: "+1415" });
    const args = ["--secret", "tok", "-H", `X-Twilio-Signature: ${signature}`, "-H", "Content-Type: application/x-www-form-urlencoded", "-"];
    expect((await verify([...args, "--url", url], form)).code).toBe(0);
    const noUrl = await verify(args, form);
    expect(noUrl).toMatchObject({ code: 1, stdout: "not verified: twilio: twilio signs the URL, and no URL was given to check against\n" });
  });

  it("key rotation: says which secret matched; --json gives the fields", async () => {
    const result = await verify([
      "--secret",
      "whsec_b2xk",
      "--secret",
      STANDARD_SECRET,
      ...headerArgs(standardHeaders()),
      "--now",
      AT.toISOString(),
      "--json",
      "body.json",
    ]);
    expect(result.code).toBe(0);
    expect(jsonEvents(result.stdout)).toEqual([
      { event: "verification", verified: true, scheme: "standard", header: "webhook-signature", secret: 2, id: "msg_1", timestamp: T, skewSeconds: 0 },
    ]);
  });

  it("headers from a file (--header @FILE), as sign prints them", async () => {
    const signed = await runInProcess(["sign", "--scheme", "slack", "--secret", "sl", "body.json"], { cwd: dir });
    file("slack-headers.txt", signed.stdout);
    expect(await verify(["--secret", "sl", "-H", "@slack-headers.txt", "body.json"])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^verified: slack/),
    });
  });
});

describe("webhook-cli verify: a signature that does not verify exits 1 with the reason", () => {
  it("a changed byte: which header, and that the length is right", async () => {
    const result = await verify(["--secret", STANDARD_SECRET, ...headerArgs(standardHeaders()), "--now", AT.toISOString(), "-"], BODY.replace("42", "43"));
    expect(result).toMatchObject({ code: 1, stderr: "" });
    expect(result.stdout).toMatch(/^not verified: standard: webhook-signature: the signature does not match \(the length is right, 44 characters of base64/);
  });

  it("a wrong secret among two: both were tried", async () => {
    const result = await verify([
      "--secret",
      "whsec_b2xk",
      "--secret",
      "whsec_bmV3",
      ...headerArgs(standardHeaders()),
      "--now",
      AT.toISOString(),
      "--json",
      "body.json",
    ]);
    expect(result.code).toBe(1);
    expect(jsonEvents(result.stdout)[0]).toMatchObject({
      verified: false,
      scheme: "standard",
      reason: "mismatch",
      header: "webhook-signature",
      secretsTried: 2,
    });
  });

  it("a stale timestamp: by how much; --tolerance widens the window", async () => {
    const args = ["--secret", STANDARD_SECRET, ...headerArgs(standardHeaders()), "--now", "2026-01-01T00:10:00Z", "body.json"];
    const stale = await verify(args);
    expect(stale).toMatchObject({ code: 1 });
    expect(stale.stdout).toContain("webhook-timestamp: the signature matches, but the timestamp is 600 s old, beyond the 300 s tolerance");
    expect((await verify([...args, "--tolerance", "15m"])).code).toBe(0);
  });

  it("no signature header of any scheme", async () => {
    const result = await verify(["--secret", "s", "-H", "Content-Type: application/json", "body.json"]);
    expect(result).toMatchObject({ code: 1 });
    expect(result.stdout).toMatch(/^not verified: no signature header of any scheme \(looked for X-Signature, webhook-signature/);
  });

  it("a request carrying two schemes: both are checked, and one failing fails it", async () => {
    const xSignature = (secret: string) => ["-H", `X-Signature: ${xSignatureOf(secret)}`];
    const both = await verify([
      "--secret",
      STANDARD_SECRET,
      ...xSignature(STANDARD_SECRET),
      ...headerArgs(standardHeaders()),
      "--now",
      AT.toISOString(),
      "body.json",
    ]);
    expect(both).toMatchObject({ code: 0 });
    expect(both.stdout.split("\n").filter(Boolean)).toHaveLength(2);
    const one = await verify(["--secret", STANDARD_SECRET, ...xSignature("other"), ...headerArgs(standardHeaders()), "--now", AT.toISOString(), "body.json"]);
    expect(one.code).toBe(1);
    expect(one.stdout).toMatch(/^not verified: default: X-Signature: the signature does not match.*\nverified: standard/);
  });
});

describe("webhook-cli verify: bad input exits 2", () => {
  it.each([
    [["--secret", "s", "body.json"], /--header: give the request's headers/],
    [["-H", "X-Signature: 00", "body.json"], /give the secret to verify with/],
    [["--secret", "s", "-H", "no colon", "body.json"], /--header: expected 'Name: value', got "no colon"/],
    [["--secret", "s", "-H", "@absent.txt", "body.json"], /absent\.txt: --header: cannot read/],
    // Read as every file an option names: a regular file within 1 MiB, not a device read without end.
    [["--secret", "s", "-H", "@/dev/zero", "body.json"], /\/dev\/zero: --header: not a regular file/],
    [["--scheme", "sivx", "--secret", "s", "-H", "svix-id: 1", "body.json"], /unknown scheme "sivx" \(Did you mean svix\?\)/],
    [["--scheme", "svix", "--secret", "not-base64!", "-H", "svix-id: 1", "body.json"], /not a svix secret/],
    [["--secret", "s", "-H", "X-Signature: 00"], /give the body to verify/],
    [["--secret", "s", "-H", "X-Signature: 00", "--url", "/sms", "body.json"], /--url: expected the full http/],
  ])("%j", async (args, message) => {
    const result = await verify(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });
});

/** The default scheme's X-Signature, as today's destination signs (HMAC-SHA1 hex). */
function xSignatureOf(secret: string): string {
  return createHmac("sha1", secret).update(BODY).digest("hex");
}
