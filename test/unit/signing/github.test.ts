import { sign, verify, verifyWithFallback } from "@octokit/webhooks-methods";
import { sign as signV4, verify as verifyV4 } from "octokit-webhooks-methods-4";
import { describe, expect, it } from "vitest";
import { SCHEMES } from "../../../src/signing/schemes.js";
import { messageId } from "../../../src/signing/sign.js";
import { recogniseSchemes } from "../../../src/signing/recognise.js";
import { BODIES, changedByte, headerOf, ourSign, ourVerify } from "../../helpers/schemes.js";

// Judges: @octokit/webhooks-methods@6.0.0 (X-Hub-Signature-256); its 4.1.0 (as octokit-webhooks-methods-4)
// for the SHA-1 X-Hub-Signature, which 6.x no longer signs or verifies.
const SECRET = "It's a Secret to Everybody";
const OTHER = "another secret";
const DELIVERY = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
const text = (body: Buffer) => body.toString("utf8");

describe("github: what we sign, octokit verifies", () => {
  it.each(Object.entries(BODIES))("%s body", async (_name, body) => {
    const signed = ourSign("github", [SECRET], { body, id: DELIVERY, timestamp: 0, event: "push" });
    expect(signed.headers).toEqual([
      ["X-GitHub-Event", "push"],
      ["X-GitHub-Delivery", DELIVERY],
      ["X-Hub-Signature-256", expect.stringMatching(/^sha256=[0-9a-f]{64}$/)],
    ]);
    expect(await verify(SECRET, text(body), headerOf(signed.headers, "X-Hub-Signature-256"))).toBe(true);
    expect(await verify(SECRET, text(changedByte(body)), headerOf(signed.headers, "X-Hub-Signature-256"))).toBe(false);
  });

  it("adds the SHA-1 X-Hub-Signature when asked, which octokit 4 verifies", async () => {
    const signed = ourSign("github", [SECRET], { body: BODIES.nonAscii, id: DELIVERY, timestamp: 0, legacy: true });
    expect(await verifyV4(SECRET, text(BODIES.nonAscii), headerOf(signed.headers, "X-Hub-Signature"))).toBe(true);
    expect(await verify(SECRET, text(BODIES.nonAscii), headerOf(signed.headers, "X-Hub-Signature-256"))).toBe(true);
  });

  it("signs with the first secret only; octokit's fallback accepts it as an additional secret", async () => {
    const signed = ourSign("github", [SECRET, OTHER], { body: BODIES.ascii, id: DELIVERY, timestamp: 0 });
    const header = headerOf(signed.headers, "X-Hub-Signature-256");
    expect(await verify(SECRET, text(BODIES.ascii), header)).toBe(true);
    expect(await verify(OTHER, text(BODIES.ascii), header)).toBe(false);
    expect(await verifyWithFallback(OTHER, text(BODIES.ascii), header, [SECRET])).toBe(true);
  });

  it("writes the event header's example when given no event, and a UUID as delivery id", () => {
    const signed = ourSign("github", [SECRET], { body: "{}", id: messageId(SCHEMES.github, (n) => Buffer.alloc(n, 0xff)), timestamp: 0 });
    expect(headerOf(signed.headers, "X-GitHub-Event")).toBe("ping");
    expect(headerOf(signed.headers, "X-GitHub-Delivery")).toBe("ffffffff-ffff-4fff-bfff-ffffffffffff");
  });
});

describe("github: what octokit signs, we verify", () => {
  it("GitHub's documented example (secret, Hello, World!)", () => {
    // From GitHub's docs on validating webhook deliveries: a published test vector.
    const headers = { "x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17" };
    expect(ourVerify("github", [SECRET], { headers, body: Buffer.from("Hello, World!") })).toMatchObject({ ok: true, header: "X-Hub-Signature-256" });
  });

  it.each(Object.entries(BODIES))("%s body", async (_name, body) => {
    const headers = { "x-hub-signature-256": await sign(SECRET, text(body)), "x-github-delivery": DELIVERY };
    expect(ourVerify("github", [OTHER, SECRET], { headers, body })).toMatchObject({ ok: true, scheme: "github", secretIndex: 1, id: DELIVERY });
  });

  it("verifies the SHA-1 header when it is the only one", async () => {
    const headers = { "x-hub-signature": await signV4({ secret: SECRET, algorithm: "sha1" }, text(BODIES.nonAscii)) };
    expect(ourVerify("github", [SECRET], { headers, body: BODIES.nonAscii })).toMatchObject({ ok: true, header: "X-Hub-Signature" });
    expect(ourVerify("github", [SECRET], { headers, body: changedByte(BODIES.nonAscii) })).toMatchObject({ ok: false, expectedLength: 40 });
  });

  it("refuses a changed byte, a wrong secret, a missing prefix and a missing header", async () => {
    const headers = { "x-hub-signature-256": await sign(SECRET, text(BODIES.ascii)) };
    expect(ourVerify("github", [SECRET], { headers, body: changedByte(BODIES.ascii) })).toMatchObject({ ok: false, reason: "mismatch", part: "sha256=" });
    expect(ourVerify("github", [OTHER], { headers, body: BODIES.ascii })).toMatchObject({ ok: false, reason: "mismatch", header: "X-Hub-Signature-256" });
    const bare = { "x-hub-signature-256": (headers["x-hub-signature-256"] as string).slice("sha256=".length) };
    expect(ourVerify("github", [SECRET], { headers: bare, body: BODIES.ascii })).toMatchObject({ ok: false, reason: "malformed", part: "sha256=" });
    expect(ourVerify("github", [SECRET], { headers: {}, body: BODIES.ascii })).toMatchObject({ ok: false, reason: "missing", header: "X-Hub-Signature-256" });
  });

  it("a truncated signature: expected and got lengths", async () => {
    const headers = { "x-hub-signature-256": (await sign(SECRET, text(BODIES.ascii))).slice(0, -2) };
    const result = ourVerify("github", [SECRET], { headers, body: BODIES.ascii });
    expect(result).toMatchObject({ ok: false, reason: "mismatch", expectedLength: 64, gotLengths: [62] });
    expect(result.ok || result.message).toBe("X-Hub-Signature-256: the signature does not match (expected 64 characters of hex, got 62)");
  });

  it("is recognised by either signature header", () => {
    expect(recogniseSchemes({ "x-hub-signature-256": "sha256=00" })).toEqual(["github"]);
    expect(recogniseSchemes({ "x-hub-signature": "sha1=00" })).toEqual(["github"]);
  });
});
