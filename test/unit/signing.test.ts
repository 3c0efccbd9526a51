import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sign, signingKey, verify } from "../../src/signing/x-signature.js";

interface Vector {
  name: string;
  secret: string;
  body: string;
  signature: string;
}
const vectors = JSON.parse(readFileSync(new URL("../../fixtures/signature-vectors.json", import.meta.url), "utf8")) as Vector[];

describe("sign", () => {
  it.each(vectors)("matches the openssl-made vector: $name", (vector) => {
    expect(sign(vector.secret, vector.body)).toBe(vector.signature);
    expect(sign(vector.secret, Buffer.from(vector.body, "utf8"))).toBe(vector.signature);
    // The key the engine and the verifier sign with: the secret's UTF-8 bytes, so the same signature.
    expect(sign(signingKey(vector.secret), vector.body)).toBe(vector.signature);
  });

  it("still agrees with openssl today (independent implementation)", () => {
    const vector = vectors.find((v) => v.name === "non-ascii identify");
    if (!vector) throw new Error("vector missing");
    const out = execFileSync("openssl", ["dgst", "-sha1", "-hmac", vector.secret], { input: vector.body }).toString();
    expect(out.trim().split(" ").pop()).toBe(sign(vector.secret, vector.body));
  });

  it("is lowercase hex of 40 characters", () => {
    expect(sign("k", "{}")).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe("verify", () => {
  const [vector] = vectors;
  if (!vector) throw new Error("no vectors");

  it("accepts the right signature", () => {
    expect(verify(vector.secret, vector.body, vector.signature)).toBe(true);
  });

  it.each([
    ["a wrong digest", "0".repeat(40)],
    ["an upper-case digest", vector.signature.toUpperCase()],
    ["a sha1= prefix", `sha1=${vector.signature}`],
    ["a truncated digest", vector.signature.slice(0, 39)],
    ["an empty header", ""],
    ["a non-ASCII header", "é".repeat(40)],
    ["a SHA-256 digest", createHmac("sha256", vector.secret).update(vector.body).digest("hex")],
  ])("rejects %s without throwing", (_name, header) => {
    expect(verify(vector.secret, vector.body, header)).toBe(false);
  });

  it.each([undefined, null, 42, ["a"], {}])("returns false for a header of %s", (header) => {
    expect(verify(vector.secret, vector.body, header)).toBe(false);
  });

  it("rejects the right digest under another secret or body", () => {
    expect(verify(`${vector.secret} `, vector.body, vector.signature)).toBe(false);
    expect(verify(vector.secret, `${vector.body} `, vector.signature)).toBe(false);
  });
});
