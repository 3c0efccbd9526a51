import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SCHEME_NAMES, type SchemeName } from "../../src/signing/schemes.js";
import { startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { ANY_SCHEME_SECRET, OTHER_SECRET, ownerSigned, TIMESTAMPED, twilioUrl, withChangedByte } from "../helpers/scheme-judges.js";
import { tempDir } from "../helpers/setup.js";

// `listen` against requests each scheme's owner signed (test/helpers/scheme-judges.ts): accepted
// and named; a changed byte, a wrong secret and a stale timestamp refused, each with its reason.
const { dir } = tempDir("webhook-cli-schemes-listen-");
const BODY = Buffer.from(
  JSON.stringify({
    version: 1,
    type: "track",
    userId: "user_1",
    event: "Order Completed",
    properties: { city: "東京", mood: "🙂" },
    timestamp: "2024-01-01T00:00:00.000Z",
  }),
);

interface Listening {
  run: InProcessRun;
  url: string;
  control: string;
  record: string;
}

let started = 0;
async function listen(args: string[]): Promise<Listening> {
  const record = join(dir, `received-${started++}.ndjson`);
  const run = startInProcess(["listen", "--port", "0", "--record", record, ...args], { cwd: dir });
  // Under --json, `Listening on` goes to stderr and the control API is in the `listening` event.
  const json = args.includes("--json");
  const [, url] = (await (json ? run.waitForStderr : run.waitFor)(/Listening on (\S+)/)) as [string, string];
  const [, control] = (await run.waitFor(json ? /"control":"([^"]+)"/ : /Control API: (\S+)/)) as [string, string];
  return { run, url, control, record };
}

/** Posts `body` to `path` with the headers `scheme`'s owner signs it with (Twilio: for the URL it is sent to). */
async function post(
  at: Listening,
  scheme: SchemeName,
  options: { secret?: string; body?: Buffer; sentBody?: Buffer; timestamp?: number; path?: string } = {},
): Promise<number> {
  const body = options.body ?? BODY;
  const path = options.path ?? "/hook";
  const url = scheme === "twilio" ? twilioUrl(`${at.url}${path}`, body) : `${at.url}${path}`;
  const headers = await ownerSigned(scheme, options.secret ?? ANY_SCHEME_SECRET, body, { url, ...(options.timestamp ? { timestamp: options.timestamp } : {}) });
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: options.sentBody ?? body });
  await response.arrayBuffer();
  return response.status;
}

const now = () => Math.floor(Date.now() / 1000);

describe("listen --scheme NAME: what the owner signs is accepted, and refused with the reason when it is not right", () => {
  it.each(SCHEME_NAMES)("%s", async (scheme) => {
    const at = await listen(["--scheme", scheme, "--secret", ANY_SCHEME_SECRET]);
    const named = scheme === "default" ? "signature ok" : `signature ok (${scheme})`;
    expect(await post(at, scheme)).toBe(200);
    // Twilio sends a JSON body to the URL with its hash in bodySHA256.
    await at.run.waitFor(new RegExp(`#1 POST /hook(\\?bodySHA256=\\w+)?  track  user_1  "Order Completed"  ${named.replace(/[()]/g, "\\$&")}`));
    // A changed byte (the signature as signed), and another secret: a mismatch.
    expect(await post(at, scheme, { sentBody: withChangedByte(BODY) })).toBe(401);
    expect(await post(at, scheme, { secret: OTHER_SECRET })).toBe(401);
    const mismatch = scheme === "default" ? /X-Signature does not match the body/ : scheme === "twilio" ? /bodySHA256/ : /the signature does not match/;
    await at.run.waitFor(new RegExp(`#2 [^\\n]*signature FAILED[^\\n]*\\n\\s+signature: [^\\n]*${mismatch.source}`));
    await at.run.waitFor(/#3 [^\n]*signature FAILED[^\n]*\n\s+signature: [^\n]*(does not match|matches neither)/);
    if (TIMESTAMPED.includes(scheme)) {
      expect(await post(at, scheme, { timestamp: now() - 400 })).toBe(401);
      await at.run.waitFor(
        /#4 [^\n]*signature FAILED[^\n]*\n\s+signature: [^\n]*the signature matches, but the timestamp is 4\d\d s old, beyond the 300 s tolerance/,
      );
    }
    at.run.stop("SIGINT");
    expect((await at.run.done).code).toBe(1);
    // The recording and the control API name the scheme of each request and why it failed.
    const lines = readFileSync(at.record, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ signatureValid: true, signatureScheme: scheme });
    expect(lines[1]).toMatchObject({ signatureValid: false, signatureScheme: scheme });
    expect(lines[1]?.["signatureReason"]).toMatch(scheme === "twilio" ? /^body-hash$/ : /^mismatch$/);
    if (TIMESTAMPED.includes(scheme)) expect(lines[3]).toMatchObject({ signatureScheme: scheme, signatureReason: "stale" });
  });
});

describe("listen without --scheme recognises each scheme by its headers", () => {
  it("verifies every scheme's request with one secret and names the scheme in the line, the recording and the control API", async () => {
    const at = await listen(["--secret", ANY_SCHEME_SECRET]);
    for (const scheme of SCHEME_NAMES) expect([scheme, await post(at, scheme)]).toEqual([scheme, 200]);
    for (const [index, scheme] of SCHEME_NAMES.entries()) {
      await at.run.waitFor(new RegExp(`#${index + 1} POST /hook[^\\n]*signature ok${scheme === "default" ? "  " : ` \\(${scheme}\\)`}`));
    }
    const received = (await (await fetch(`${at.control}/api/received`)).json()) as { requests: { scheme: string; signature: string }[] };
    expect(received.requests.map((request) => [request.scheme, request.signature])).toEqual(SCHEME_NAMES.map((scheme) => [scheme, "ok"]));
    at.run.stop("SIGINT");
    expect((await at.run.done).code).toBe(0);
    const recorded = readFileSync(at.record, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line)["signatureScheme"]);
    expect(recorded).toEqual([...SCHEME_NAMES]);
  });

  it("a request with no signature header of any scheme is refused, naming every header looked for", async () => {
    const at = await listen(["--secret", ANY_SCHEME_SECRET]);
    const response = await fetch(`${at.url}/hook`, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe(
      "missing X-Signature header (nor any other scheme's: looked for webhook-signature, svix-signature, X-Hub-Signature-256, Stripe-Signature, X-Shopify-Hmac-Sha256, X-Slack-Signature, X-Twilio-Signature)",
    );
  });

  it("--scheme requires that scheme: another scheme's signature is a missing header; a missing id header is named", async () => {
    const at = await listen(["--scheme", "standard", "--secret", ANY_SCHEME_SECRET, "--json"]);
    expect(await post(at, "github")).toBe(401);
    const headers = await ownerSigned("standard", ANY_SCHEME_SECRET, BODY);
    const { "webhook-id": _id, ...withoutId } = headers;
    const response = await fetch(`${at.url}/hook`, { method: "POST", headers: { "content-type": "application/json", ...withoutId }, body: BODY });
    expect(response.status).toBe(401);
    at.run.stop("SIGINT");
    const events = (await at.run.done).stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((event) => event["event"] === "request");
    expect(events.map((event) => [event["signatureScheme"], event["signatureReason"], event["problem"]])).toEqual([
      ["standard", "missing", "webhook-signature is missing"],
      ["standard", "missing", "webhook-id is missing"],
    ]);
  });
});

describe("listen: rotation, tolerance, bad input", () => {
  it("accepts a signature made with any of several secrets and says which matched", async () => {
    const at = await listen(["--secret", OTHER_SECRET, "--secret", ANY_SCHEME_SECRET]);
    expect(await post(at, "standard")).toBe(200);
    expect(await post(at, "github", { secret: OTHER_SECRET })).toBe(200);
    await at.run.waitFor(/#1 [^\n]*signature ok \(standard, secret 2 of 2\)/);
    await at.run.waitFor(/#2 [^\n]*signature ok \(github, secret 1 of 2\)/);
  });

  it("--tolerance widens (or narrows) how old a timestamp may be", async () => {
    const wide = await listen(["--secret", ANY_SCHEME_SECRET, "--tolerance", "10m"]);
    expect(await post(wide, "stripe", { timestamp: now() - 400 })).toBe(200);
    await wide.run.waitFor(/#1 [^\n]*signature ok \(stripe, 4\d\d s old\)/);
    const narrow = await listen(["--secret", ANY_SCHEME_SECRET, "--tolerance", "30s"]);
    expect(await post(narrow, "slack", { timestamp: now() - 60 })).toBe(401);
    await narrow.run.waitFor(/the timestamp is \d\d s old, beyond the 30 s tolerance/);
  });

  it.each([
    [["--scheme", "slakc"], /--scheme: unknown scheme "slakc" \(Did you mean slack\?\)/],
    [["--scheme", "standard", "--secret", "s3cret!"], /--secret: the secret is not a standard secret: it must be whsec_ followed by base64/],
    [["--public-url", "ngrok.app/x"], /--public-url: expected the http:\/\/ or https:\/\/ URL senders use/],
  ])("%j exits 2 before listening", async (args, message) => {
    const run = startInProcess(["listen", "--port", "0", ...args], { cwd: dir });
    const result = await run.done;
    expect(result.code).toBe(2);
    expect(result.stdout).not.toMatch(/Listening/);
    expect(result.stderr).toMatch(message);
  });
});

describe("listen --scheme twilio: the URL it was reached at, or --public-url", () => {
  it("verifies against its own URL, and behind a proxy or tunnel against --public-url joined with the path", async () => {
    const direct = await listen(["--scheme", "twilio", "--secret", "twilio-auth-token"]);
    expect(await post(direct, "twilio", { secret: "twilio-auth-token", path: "/sms?From=%2B1555" })).toBe(200);
    // Signed for the public URL a tunnel forwards from, then delivered here by the tunnel.
    const publicUrl = "https://hooks.example.ngrok.app/prefix";
    const tunnelled = await listen(["--scheme", "twilio", "--secret", "twilio-auth-token", "--public-url", publicUrl]);
    const signedFor = twilioUrl(`${publicUrl}/sms`, BODY);
    const headers = await ownerSigned("twilio", "twilio-auth-token", BODY, { url: signedFor });
    const deliver = (to: string) =>
      fetch(`${to}/sms${signedFor.slice(signedFor.indexOf("?"))}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: BODY });
    expect((await deliver(tunnelled.url)).status).toBe(200);
    // Without --public-url the same request is checked against 127.0.0.1's URL: a mismatch.
    expect((await deliver(direct.url)).status).toBe(401);
    await direct.run.waitFor(/#2 [^\n]*signature FAILED \(twilio\)[^\n]*\n\s+signature: X-Twilio-Signature: the signature does not match/);
  });
});
