import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { judgeRequest } from "../../src/receiver/verdict.js";

// No signature header of any scheme: the message names every header looked for (docs/schemes.md#recognition).
const MISSING_SIGNATURE =
  "missing X-Signature header (nor any other scheme's: looked for webhook-signature, svix-signature, X-Hub-Signature-256, Stripe-Signature, X-Shopify-Hmac-Sha256, X-Slack-Signature, X-Twilio-Signature)";

// The batch rule's known answers: made with `openssl dgst -sha1 -hmac` by fixtures/make-batch-signature-vectors.sh.
interface Vector {
  name: string;
  secret: string;
  body: string;
  firstElement: string;
  firstElementSignature: string;
  bodySignature: string;
}
const VECTORS = JSON.parse(readFileSync(new URL("../../fixtures/batch-signature-vectors.json", import.meta.url), "utf8")) as Vector[];
const SECRET = "s3cr3t";
/** The issues of each kind a batch verdict names (src/receiver/body-shape.ts). */
const MAX_BATCH_ISSUES = 100;
// Computed with node:crypto here, independently of src/signing/x-signature.ts.
const hmac = (body: string | Buffer, secret = SECRET) => createHmac("sha1", secret).update(body).digest("hex");
const judge = (body: string | Buffer, headers: Record<string, string> = {}, options: { secret?: string; strict?: boolean } = { secret: SECRET }) =>
  judgeRequest(Buffer.from(body), headers, options);

const track = (userId: string, extra: Record<string, unknown> = {}) => ({
  version: 2,
  type: "track",
  event: "Order Completed",
  userId,
  properties: {},
  timestamp: "2026-01-02T03:04:05.678Z",
  ...extra,
});

describe("the batch signature rule: element 0's bytes as received", () => {
  it.each(VECTORS.map((v) => [v.name, v] as const))("%s: verifies by the rule the header was made with, and says which", (_name, v) => {
    const byElement = judge(v.body, { "x-signature": v.firstElementSignature }, { secret: v.secret });
    expect(byElement).toMatchObject({ signatureValid: true, signatureRule: "first-element", signatureError: null, bodyKind: "batch" });
    expect(byElement.signatureNote).toContain("element 0 only");
    const byBody = judge(v.body, { "x-signature": v.bodySignature }, { secret: v.secret });
    expect(byBody).toMatchObject({ signatureValid: true, signatureRule: "body", signatureNote: null });
  });

  it("a batch with a tampered second element still verifies, as the real destination signs it; a whole-body check rejects it", () => {
    const [original, tampered] = VECTORS as [Vector, Vector];
    expect(tampered.name).toContain("tampered");
    expect(tampered.firstElementSignature).toBe(original.firstElementSignature);
    const verdict = judge(tampered.body, { "x-signature": tampered.firstElementSignature }, { secret: tampered.secret });
    expect(verdict).toMatchObject({ signatureValid: true, signatureRule: "first-element" });
    expect(verdict.signatureNote).toContain("a receiver that hashes the whole body would reject this batch");
    // What a receiver hashing the whole body computes: not the header the sender sent.
    expect(hmac(tampered.body, tampered.secret)).toBe(tampered.bodySignature);
    expect(tampered.bodySignature).not.toBe(tampered.firstElementSignature);
  });

  it("takes element 0 from the raw bytes: its own inner spacing is signed, a re-serialized element 0 is not", () => {
    const pretty = VECTORS.find((v) => v.name.includes("pretty")) as Vector;
    expect(pretty.firstElement).not.toBe(JSON.stringify(JSON.parse(pretty.firstElement)));
    expect(judge(pretty.body, { "x-signature": pretty.firstElementSignature }).signatureRule).toBe("first-element");
    const compact = hmac(JSON.stringify(JSON.parse(pretty.firstElement)));
    const resigned = judge(pretty.body, { "x-signature": compact });
    expect(resigned.signatureValid).toBe(false);
    expect(resigned.diagnosis).toMatchObject({
      cause: "reserialized",
      message: expect.stringContaining("over element 0: the signature matches JSON.stringify"),
    });
  });

  it("a batch matching neither rule fails, and the diagnosis explains both rules", () => {
    const [v] = VECTORS as [Vector];
    const wrong = judge(v.body, { "x-signature": hmac(v.firstElement, "another secret") });
    expect(wrong).toMatchObject({ signatureValid: false, signatureRule: null, valid: false });
    expect(wrong.signatureError).toBe("X-Signature matches neither the whole body nor its element 0");
    expect(wrong.diagnosis?.cause).toBe("neither-rule");
    const text = wrong.diagnosis?.message ?? "";
    expect(text).toContain("over the whole body and over element 0's exact bytes");
    expect(text).toContain(`bytes 1–${v.firstElement.length}`);
    expect(text).toContain("a receiver that hashes the whole batch rejects every real batch");
  });

  it("a tampered element 0 fails: it is what the signature covers", () => {
    const [v] = VECTORS as [Vector];
    const tampered = v.body.replace('"revenue":42.5', '"revenue":4250');
    expect(tampered).not.toBe(v.body);
    expect(judge(tampered, { "x-signature": v.firstElementSignature })).toMatchObject({ signatureValid: false, diagnosis: { cause: "neither-rule" } });
  });

  it("names the sender's mistake over element 0 (upper-case digest), with both rules", () => {
    const [v] = VECTORS as [Vector];
    const verdict = judge(v.body, { "x-signature": v.firstElementSignature.toUpperCase() });
    expect(verdict.diagnosis?.cause).toBe("uppercase");
    expect(verdict.diagnosis?.message).toMatch(/^over element 0: the digest is upper-case hex.*rejects every real batch$/);
  });

  it("a large batch still gets both rules explained, without guessing (no HMAC variants over a large body)", () => {
    const elements = Array.from({ length: 400 }, (_, i) => track(`user_${i}`, { properties: { pad: "x".repeat(200) } }));
    const body = JSON.stringify(elements);
    expect(body.length).toBeGreaterThan(64 * 1024);
    const verdict = judge(body, { "x-signature": hmac(body, "other") });
    expect(verdict.diagnosis).toMatchObject({ cause: "neither-rule", message: expect.stringContaining("element 0's exact bytes") });
  });

  it("an ASCII body signed compact but sent pretty-printed is diagnosed as re-serialized, not re-encoded", () => {
    const message = track("u1");
    const verdict = judge(JSON.stringify(message, null, 2), { "x-signature": hmac(JSON.stringify(message)) });
    expect(verdict.diagnosis).toMatchObject({ cause: "reserialized", message: expect.stringContaining("JSON.stringify of the body") });
  });

  it("a single body is checked over the whole body only, with today's error", () => {
    const body = JSON.stringify(track("u1"));
    expect(judge(body, { "x-signature": hmac(body) })).toMatchObject({ signatureValid: true, signatureRule: "body", signatureNote: null });
    expect(judge(body, { "x-signature": hmac(body, "x") }).signatureError).toBe("X-Signature does not match the body");
  });
});

describe("requests the real sender sends unsigned", () => {
  it("no body (data undefined): valid, no data, unsigned even with a secret; never malformed JSON", () => {
    const verdict = judge("", {});
    expect(verdict).toMatchObject({ bodyKind: "none", signatureValid: null, signatureRule: null, shapeErrors: [], valid: true, size: 0 });
    expect(verdict.signatureNote).toContain("none for a request without data");
    // A header on an empty body is still checked.
    expect(judge("", { "x-signature": hmac("", "other") }).signatureValid).toBe(false);
    expect(judge("", { "x-signature": hmac("") }).signatureValid).toBe(true);
  });

  it("--strict judges messages only: an empty body is then invalid", () => {
    const verdict = judge("", {}, { secret: SECRET, strict: true });
    expect(verdict.valid).toBe(false);
    expect(verdict.shapeErrors[0]?.message).toBe("the body is empty (--strict judges messages only)");
  });

  it("a batch whose element 0 is null carries no signature: unsigned, valid; element 0 not null and no header: missing", () => {
    const body = '[null,{"coupon":"SPRING"}]';
    const verdict = judge(body, {});
    expect(verdict).toMatchObject({ bodyKind: "batch", signatureValid: null, valid: true, batch: { elements: 2, messages: 0, payloads: 1, empty: 1 } });
    expect(verdict.signatureNote).toContain("element 0 is null");
    expect(judge(' [ null , {"a":1} ] ', {}).signatureValid).toBe(null);
    expect(judge('[{"coupon":"SPRING"},null]', {})).toMatchObject({ signatureValid: false, signatureError: MISSING_SIGNATURE });
    expect(judge('[nul,{"a":1}]', {})).toMatchObject({ signatureValid: false, signatureError: MISSING_SIGNATURE });
  });

  it("without a secret nothing is checked and no note is given", () => {
    expect(judge("", {}, {})).toMatchObject({ signatureValid: null, signatureNote: null, valid: true });
  });
});

describe("what the body is", () => {
  it("an object whose type is a message type is a message, shape-checked as before", () => {
    const broken = judge(JSON.stringify({ type: "track", userId: "u1" }), {}, {});
    expect(broken).toMatchObject({ bodyKind: "message", type: "track", valid: false });
    expect(broken.shapeErrors.map((e) => e.key)).toContain("event");
  });

  it("any other object is a mapped payload: reported as such, never as a malformed message; --strict judges it as a message", () => {
    for (const payload of ['{"sku":"x","price":9.99}', "{}", '{"type":"premium","plan":"gold"}']) {
      const loose = judge(payload, {}, {});
      expect(loose, payload).toMatchObject({ bodyKind: "payload", type: undefined, userId: undefined, shapeErrors: [], shapeWarnings: [], valid: true });
      const strict = judge(payload, {}, { strict: true });
      expect(strict.valid, payload).toBe(false);
      expect(strict.shapeErrors[0]?.key, payload).toBe("type");
    }
  });

  it("a JSON value that is neither an object nor an array is invalid", () => {
    for (const body of ['"text"', "42", "null", "true"]) {
      const verdict = judge(body, {}, {});
      expect(verdict, body).toMatchObject({ bodyKind: "invalid", valid: false });
      expect(verdict.shapeErrors[0]?.message, body).toMatch(/^expected a JSON object \(a message or a mapped payload\) or an array \(a batch\), got /);
    }
  });

  it("an array is a batch: each message element shape-checked and named by index; null and payload elements are fine", () => {
    const elements = [track("u1"), { version: 2, type: "track", userId: "u2" }, null, { sku: 1 }, "text", track("u3", { extra: 1 })];
    const verdict = judge(JSON.stringify(elements), {}, {});
    expect(verdict).toMatchObject({ bodyKind: "batch", type: undefined, valid: false, batch: { elements: 6, messages: 3, payloads: 1, empty: 1 } });
    expect(verdict.shapeErrors).toEqual([
      { key: "[1].event", message: 'element 1: missing required key "event"' },
      { key: "[1].properties", message: 'element 1: missing required key "properties"' },
      { key: "[1].timestamp", message: 'element 1: missing required key "timestamp"' },
      { key: "[4]", message: "element 4: expected an object (an event's data) or null, got a string" },
    ]);
    expect(verdict.shapeWarnings).toEqual([{ key: "[5].extra", message: 'element 5: unknown key "extra" for type track' }]);
    const good = judge(JSON.stringify([track("u1"), null, { sku: "x" }]), {}, {});
    expect(good).toMatchObject({ valid: true, shapeErrors: [] });
  });

  it("--strict: every element must be a message (null and payload elements are errors), unknown keys are errors", () => {
    const verdict = judge(JSON.stringify([track("u1", { extra: 1 }), null, { sku: "x" }]), {}, { strict: true });
    expect(verdict.valid).toBe(false);
    expect(verdict.shapeErrors.map((e) => e.key)).toEqual(["[0].extra", "[1]", "[2].type"]);
    expect(verdict.shapeErrors[1]?.message).toContain("not a message (--strict judges messages only)");
  });

  it("an empty batch is invalid: the real sender never sends one", () => {
    expect(judge("[]", {}, {}).shapeErrors[0]?.message).toContain("an empty batch");
  });

  it("counts what a large batch holds: elements that are not objects past the named issues, null and payload elements", () => {
    const verdict = judge(`[${Array(1000).fill("7").join(",")},null,{},{"type":"track"}]`, {}, {});
    expect(verdict.batch).toEqual({ elements: 1003, messages: 1, payloads: 1, empty: 1 });
    expect(verdict.shapeErrors).toHaveLength(MAX_BATCH_ISSUES + 1);
    expect(verdict.shapeErrors[0]?.message).toBe("element 0: expected an object (an event's data) or null, got a number");
    // 900 numbers past the named ones, and the track's five missing keys (version, user, event, properties, timestamp).
    expect(verdict.shapeErrors.at(-1)?.message).toBe("… and 905 more errors in the batch's elements");
  });

  it(`names at most ${MAX_BATCH_ISSUES} issues of a batch and counts the rest`, () => {
    const elements = Array.from({ length: 300 }, () => ({ version: 2, type: "track" }));
    const verdict = judge(JSON.stringify(elements), {}, {});
    expect(verdict.shapeErrors).toHaveLength(MAX_BATCH_ISSUES + 1);
    // Each element misses userId (or anonymousId), event, properties and timestamp: 4 errors.
    expect(verdict.shapeErrors.at(-1)).toEqual({ key: "(more)", message: `… and ${300 * 4 - MAX_BATCH_ISSUES} more errors in the batch's elements` });
  });
});
