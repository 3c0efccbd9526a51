import { createHmac } from "node:crypto";
import { verify as githubVerify } from "@octokit/webhooks-methods";
import { verify as githubVerifyV4 } from "octokit-webhooks-methods-4";
import { verifySlackRequest } from "@slack/bolt";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { Webhook as Svix } from "svix";
import twilio from "twilio";
import { describe, expect, it } from "vitest";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";
import { runInShell, shellAvailability } from "../helpers/shells.js";
import { runInProcess } from "../helpers/run-cli.js";

// `sign`, run in process as a user runs it; each scheme's owner's library judges what it prints.
const { dir, file } = tempDir("webhook-cli-sign-");
const BODY = '{"type":"identify","userId":"u_ü","traits":{"name":"Zoë Ångström","city":"東京","mood":"🙂"}}';
file("body.json", BODY);
const STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const { server } = closeServersAfterEach();

/** `Name: value` lines as a header record with lower-case names, as a receiver sees them. */
function headersOf(stdout: string): Record<string, string> {
  const lines = stdout.trimEnd().split("\n");
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 2)]));
}

async function signed(args: string[], input?: string): Promise<Record<string, string>> {
  const result = await runInProcess(["sign", ...args], { cwd: dir, ...(input !== undefined ? { input } : {}) });
  expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" });
  return headersOf(result.stdout);
}

describe("webhook-cli sign: each scheme's owner verifies what it prints", () => {
  it("standard (standardwebhooks) and svix (svix)", async () => {
    expect(new Webhook(STANDARD_SECRET).verify(BODY, await signed(["--scheme", "standard", "--secret", STANDARD_SECRET, "body.json"]))).toEqual(
      JSON.parse(BODY),
    );
    const svix = await signed(["--scheme", "svix", "--secret", STANDARD_SECRET, "body.json"]);
    expect(Object.keys(svix)).toEqual(["svix-id", "svix-timestamp", "svix-signature"]);
    expect(() => new Svix(STANDARD_SECRET).verify(BODY, svix)).not.toThrow();
  });

  it("github (@octokit/webhooks-methods), with --legacy's SHA-1 header (its 4.x)", async () => {
    const headers = await signed(["--scheme", "github", "--secret", "s3cr3t", "--event", "push", "--legacy", "body.json"]);
    expect(headers["x-github-event"]).toBe("push");
    expect(await githubVerify("s3cr3t", BODY, headers["x-hub-signature-256"] as string)).toBe(true);
    expect(await githubVerifyV4("s3cr3t", BODY, headers["x-hub-signature"] as string)).toBe(true);
  });

  it("stripe (constructEvent), from standard input, the secret from $WEBHOOK_SECRET", async () => {
    const result = await runInProcess(["sign", "--scheme", "stripe", "-"], { cwd: dir, input: BODY, env: { WEBHOOK_SECRET: "whsec_from_env" } });
    expect(result.code).toBe(0);
    expect(Stripe.webhooks.constructEvent(BODY, headersOf(result.stdout)["stripe-signature"] as string, "whsec_from_env")).toEqual(JSON.parse(BODY));
  });

  it("slack (Bolt's verifySlackRequest) and shopify (its documented HMAC check)", async () => {
    const slack = await signed(["--scheme", "slack", "--secret-file", file("slack.secret", "slack-signing-secret\n"), "body.json"]);
    expect(() =>
      verifySlackRequest({
        signingSecret: "slack-signing-secret",
        body: BODY,
        headers: { "x-slack-signature": slack["x-slack-signature"] as string, "x-slack-request-timestamp": Number(slack["x-slack-request-timestamp"]) },
      }),
    ).not.toThrow();
    const shopify = await signed(["--scheme", "shopify", "--secret", "shpss_secret", "--event", "orders/paid", "body.json"]);
    expect(shopify["x-shopify-hmac-sha256"]).toBe(createHmac("sha256", "shpss_secret").update(BODY).digest("base64"));
    expect(shopify["x-shopify-topic"]).toBe("orders/paid");
  });

  it("twilio (validateRequest, validateRequestWithBody): a form, and JSON through bodySHA256", async () => {
    const form = "Body=Gr%C3%BC%C3%9Fe&From=%2B14158675310";
    const url = "https://example.com/sms?x=1";
    const formHeaders = await signed(["--scheme", "twilio", "--secret", "tok", "--url", url, "--content-type", "application/x-www-form-urlencoded", "-"], form);
    expect(twilio.validateRequest("tok", formHeaders["x-twilio-signature"] as string, url, { Body: "Grüße", From: "+14158675310" })).toBe(true);
    const json = await runInProcess(["sign", "--scheme", "twilio", "--secret", "tok", "--url", url, "--json", "body.json"], { cwd: dir });
    const event = JSON.parse(json.stdout) as { url: string; headers: Record<string, string> };
    expect(event.url).toMatch(/^https:\/\/example\.com\/sms\?x=1&bodySHA256=[0-9a-f]{64}$/);
    expect(twilio.validateRequestWithBody("tok", event.headers["X-Twilio-Signature"] as string, event.url, BODY)).toBe(true);
  });

  it("--json with several secrets: stripe signs with each, and the owner accepts either", async () => {
    const result = await runInProcess(
      ["sign", "--scheme", "stripe", "--secret", "whsec_new", "--secret", "whsec_old", "--timestamp", "1700000000", "--json", "body.json"],
      {
        cwd: dir,
      },
    );
    const event = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(event).toMatchObject({ event: "signed", scheme: "stripe", url: null, id: null, timestamp: 1700000000 });
    const header = (event["headers"] as Record<string, string>)["Stripe-Signature"] as string;
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const secret of ["whsec_new", "whsec_old"]) expect(() => Stripe.webhooks.constructEvent(BODY, header, secret, 0)).not.toThrow();
  });

  it("--id and --timestamp make it reproducible: the owner's own signer gives the same signature", async () => {
    const args = ["--scheme", "standard", "--secret", STANDARD_SECRET, "--id", "msg_1", "--timestamp", "1700000000", "body.json"];
    const headers = await signed(args);
    expect(await signed(args)).toEqual(headers);
    expect(headers).toEqual({
      "webhook-id": "msg_1",
      "webhook-timestamp": "1700000000",
      "webhook-signature": new Webhook(STANDARD_SECRET).sign("msg_1", new Date(1_700_000_000_000), BODY),
    });
  });
});

const { skip, missing } = shellAvailability();

describe.skipIf(skip || missing.length > 0)("webhook-cli sign --curl, run by bash", () => {
  it("sends the exact bytes with the signed headers: octokit verifies what arrived", async () => {
    const app = await server();
    const result = await runInProcess(["sign", "--scheme", "github", "--secret", "s3cr3t", "--id", "d-1", "body.json", "--curl", `${app.url}/hook?a=[1]`], {
      cwd: dir,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^[\x20-\x7e\n]*$/);
    await runInShell("bash", result.stdout, { PATH: process.env["PATH"] ?? "" });
    const [request] = app.requests;
    expect(request?.url).toBe("/hook?a=[1]");
    expect(request?.body.toString("utf8")).toBe(BODY);
    expect(request?.headers).toMatchObject({ "content-type": "application/json", "x-github-delivery": "d-1", "x-github-event": "ping" });
    expect(request?.headers["user-agent"]).toBeUndefined();
    expect(await githubVerify("s3cr3t", request?.body.toString("utf8") ?? "", request?.headers["x-hub-signature-256"] as string)).toBe(true);
  });
});

describe("webhook-cli sign: bad input exits 2, saying why, and prints nothing on stdout", () => {
  it.each([
    [["--scheme", "stirpe", "--secret", "s", "body.json"], /--scheme: unknown scheme "stirpe" \(Did you mean stripe\?\)/],
    [["--scheme", "standard", "--secret", "whsec_not base64", "body.json"], /not a standard secret: it must be whsec_ followed by base64/],
    [["--scheme", "github", "body.json"], /give a secret to sign with: --secret, --secret-file or \$WEBHOOK_SECRET/],
    [["--scheme", "github", "--secret", "s"], /give the body to sign: a FILE, or - for standard input/],
    [["--scheme", "github", "--secret", "s", "missing.json"], /missing\.json: cannot read/],
    [["--scheme", "twilio", "--secret", "s", "body.json"], /--url: scheme twilio signs the URL/],
    [
      ["--scheme", "svix", "--secret", STANDARD_SECRET, "--id", "msg.1", "body.json"],
      /--id: scheme svix signs id\.timestamp\.body: the id must not contain a dot/,
    ],
    [["--scheme", "github", "--secret", "s", "--curl", "/hook", "body.json"], /--curl: expected a full http:\/\/ or https:\/\/ URL/],
    [["--scheme", "github", "--secret", "s", "--secret-file", "none.txt", "body.json"], /none\.txt: --secret-file: cannot read: no such file \(ENOENT\)$/m],
    [["--secret", "s", "body.json"], /required option '--scheme <name>' not specified/],
  ])("%j", async (args, message) => {
    const result = await runInProcess(["sign", ...args], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });
});
