import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sign } from "../../../src/signing/x-signature.js";
import { BODIES, changedByte, ourSign, ourVerify } from "../../helpers/schemes.js";

// The default scheme is today's X-Signature, unchanged: the one signer and verifier must agree with
// src/signing/x-signature.ts's sign/verify and with the openssl-made vectors that judge them (fixtures/signature-vectors.json).
interface Vector {
  name: string;
  secret: string;
  body: string;
  signature: string;
}
const vectors = JSON.parse(readFileSync(new URL("../../../fixtures/signature-vectors.json", import.meta.url), "utf8")) as Vector[];

describe("default (X-Signature)", () => {
  it.each(vectors)("signs the openssl-made vector: $name", (vector) => {
    const signed = ourSign("default", [vector.secret], { body: vector.body, id: "", timestamp: 0 });
    expect(signed.headers).toEqual([["X-Signature", vector.signature]]);
  });

  it.each(vectors)("verifies the openssl-made vector: $name", (vector) => {
    const headers = { "x-signature": vector.signature };
    expect(ourVerify("default", ["wrong", vector.secret], { headers, body: Buffer.from(vector.body) })).toMatchObject({
      ok: true,
      scheme: "default",
      header: "X-Signature",
      secretIndex: 1,
    });
  });

  it("agrees with today's sign on non-ASCII bodies, signing with the first secret only", () => {
    const signed = ourSign("default", ["k1", "k2"], { body: BODIES.nonAscii, id: "", timestamp: 0 });
    expect(signed.headers).toEqual([["X-Signature", sign("k1", BODIES.nonAscii)]]);
  });

  it("refuses a changed byte, a wrong secret, an upper-case digest and a sha1= prefix", () => {
    const headers = { "x-signature": sign("k", BODIES.ascii) };
    expect(ourVerify("default", ["k"], { headers, body: changedByte(BODIES.ascii) })).toMatchObject({ ok: false, reason: "mismatch", expectedLength: 40 });
    expect(ourVerify("default", ["j"], { headers, body: BODIES.ascii })).toMatchObject({ ok: false, reason: "mismatch" });
    expect(ourVerify("default", ["k"], { headers: { "x-signature": headers["x-signature"].toUpperCase() }, body: BODIES.ascii })).toMatchObject({ ok: false });
    const prefixed = ourVerify("default", ["k"], { headers: { "x-signature": `sha1=${headers["x-signature"]}` }, body: BODIES.ascii });
    expect(prefixed).toMatchObject({ ok: false, reason: "mismatch", gotLengths: [45] });
  });
});
