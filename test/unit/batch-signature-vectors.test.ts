// Known answers for the Webhooks (Actions) batch signature, made with openssl by
// fixtures/make-batch-signature-vectors.sh: HMAC-SHA1 over element 0's bytes, not the whole body.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sign, signingKey, verify } from "../../src/signing/x-signature.js";
import { firstElementBytes } from "../../src/json/first-element.js";

interface BatchVector {
  name: string;
  secret: string;
  body: string;
  firstElement: string;
  firstElementSignature: string;
  bodySignature: string;
}
const file = new URL("../../fixtures/batch-signature-vectors.json", import.meta.url);
const vectors = JSON.parse(readFileSync(file, "utf8")) as BatchVector[];

function firstElementOf(vector: BatchVector): Buffer {
  const raw = Buffer.from(vector.body, "utf8");
  const span = firstElementBytes(raw);
  if (span === null) throw new Error(`${vector.name}: no first element`);
  return raw.subarray(span.start, span.end);
}

describe("batch signature known answers", () => {
  it("has a fixed 3-element batch and its variants", () => {
    expect(vectors.map((v) => v.name)).toContain("compact 3-element batch");
    for (const vector of vectors) expect(JSON.parse(vector.body)).toHaveLength(3);
  });

  it.each(vectors)("$name: sign over the bytes firstElementBytes finds gives the openssl digest", (vector) => {
    const element = firstElementOf(vector);
    expect(element.toString("utf8")).toBe(vector.firstElement);
    expect(sign(vector.secret, element)).toBe(vector.firstElementSignature);
    expect(sign(signingKey(vector.secret), element)).toBe(vector.firstElementSignature);
    expect(verify(vector.secret, element, vector.firstElementSignature)).toBe(true);
    // The whole body has another digest: a receiver hashing it rejects every real batch.
    expect(sign(vector.secret, vector.body)).toBe(vector.bodySignature);
    expect(vector.bodySignature).not.toBe(vector.firstElementSignature);
    expect(verify(vector.secret, vector.body, vector.firstElementSignature)).toBe(false);
  });

  it("a tampered second element keeps the batch's signature (only element 0 is signed)", () => {
    const [original, tampered] = vectors;
    if (!original || !tampered) throw new Error("vectors missing");
    expect(tampered.name).toBe("the same batch, second element tampered");
    expect(tampered.body).not.toBe(original.body);
    expect(tampered.firstElementSignature).toBe(original.firstElementSignature);
    expect(tampered.bodySignature).not.toBe(original.bodySignature);
    expect(verify(original.secret, firstElementOf(tampered), original.firstElementSignature)).toBe(true);
  });

  it("element 0 of a compact batch is signed like a single request carrying it", () => {
    const vector = vectors[0];
    if (!vector) throw new Error("vectors missing");
    expect(sign(vector.secret, JSON.stringify(JSON.parse(vector.firstElement)))).toBe(vector.firstElementSignature);
  });

  it("still agrees with openssl today, and the script makes the same file", () => {
    const vector = vectors.find((v) => v.name === "non-ascii elements and secret");
    if (!vector) throw new Error("vector missing");
    const out = execFileSync("openssl", ["dgst", "-sha1", "-hmac", vector.secret], { input: firstElementOf(vector) }).toString();
    expect(out.trim().split(" ").pop()).toBe(vector.firstElementSignature);
    const dir = mkdtempSync(join(tmpdir(), "batch-vectors-"));
    try {
      copyFileSync(fileURLToPath(new URL("../../fixtures/make-batch-signature-vectors.sh", import.meta.url)), join(dir, "make.sh"));
      execFileSync("bash", [join(dir, "make.sh")]);
      expect(readFileSync(join(dir, "batch-signature-vectors.json"), "utf8")).toBe(readFileSync(file, "utf8"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
