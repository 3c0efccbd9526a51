import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { diagnoseSignature } from "../../src/receiver/diagnose.js";

const SECRET = "s3cret";
const hmac = (body: string | Buffer, secret = SECRET, algorithm = "sha1") => createHmac(algorithm, secret).update(body).digest("hex");
const message = { version: 1, type: "identify", userId: "u1", traits: { name: "Zoë Ångström" }, timestamp: "2024-01-01T00:00:00.000Z" };
const compact = JSON.stringify(message);
const raw = Buffer.from(compact);

describe("diagnoseSignature", () => {
  it("spots a sha1= prefix", () => {
    expect(diagnoseSignature(raw, `sha1=${hmac(raw)}`, SECRET)?.cause).toBe("prefix");
  });

  it("spots an upper-case digest", () => {
    expect(diagnoseSignature(raw, hmac(raw).toUpperCase(), SECRET)).toMatchObject({ cause: "uppercase", message: expect.stringContaining("lowercase") });
  });

  it("spots HMAC-SHA256 instead of HMAC-SHA1, with or without a prefix", () => {
    expect(diagnoseSignature(raw, hmac(raw, SECRET, "sha256"), SECRET)).toMatchObject({ cause: "sha256", message: expect.stringContaining("HMAC-SHA256") });
    expect(diagnoseSignature(raw, `sha256=${hmac(raw, SECRET, "sha256")}`, SECRET)?.cause).toBe("sha256");
  });

  it("spots a sender secret with a trailing newline or spaces", () => {
    expect(diagnoseSignature(raw, hmac(raw, `${SECRET}\n`), SECRET)).toMatchObject({ cause: "secret-whitespace", message: expect.stringContaining("sender") });
    expect(diagnoseSignature(raw, hmac(raw, ` ${SECRET}`), SECRET)?.cause).toBe("secret-whitespace");
  });

  it("spots a receiver secret with stray whitespace", () => {
    expect(diagnoseSignature(raw, hmac(raw), `${SECRET}\r\n`)).toMatchObject({ cause: "secret-whitespace", message: expect.stringContaining("receiver") });
  });

  it("spots a body re-serialized after signing (pretty-printed sent, compact signed, and the reverse)", () => {
    const pretty = Buffer.from(JSON.stringify(message, null, 2));
    expect(diagnoseSignature(pretty, hmac(compact), SECRET)).toMatchObject({ cause: "reserialized", message: expect.stringContaining("JSON.stringify") });
    expect(diagnoseSignature(raw, hmac(JSON.stringify(message, null, 2)), SECRET)).toMatchObject({
      cause: "reserialized",
      message: expect.stringContaining("pretty"),
    });
    const spaced = Buffer.from(compact.replace(/,/g, ", "));
    expect(diagnoseSignature(spaced, hmac(compact), SECRET)?.cause).toBe("reserialized");
  });

  it("spots a re-encoded body: Latin-1 vs UTF-8 and escaped unicode", () => {
    expect(diagnoseSignature(raw, hmac(Buffer.from(compact, "latin1")), SECRET)).toMatchObject({
      cause: "reencoded",
      message: expect.stringContaining("Latin-1"),
    });
    const latin1Body = Buffer.from(compact, "latin1");
    expect(diagnoseSignature(latin1Body, hmac(raw), SECRET)).toMatchObject({ cause: "reencoded", message: expect.stringContaining("sent as Latin-1") });
    const escaped = compact.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    expect(diagnoseSignature(raw, hmac(escaped), SECRET)).toMatchObject({ cause: "reencoded", message: expect.stringContaining("escaped") });
    expect(diagnoseSignature(Buffer.from(escaped), hmac(raw), SECRET)).toMatchObject({
      cause: "reencoded",
      message: expect.stringContaining("\\uXXXX escapes"),
    });
  });

  it("names a digest of the wrong form, and says nothing for a plain wrong secret", () => {
    expect(diagnoseSignature(raw, "not-hex", SECRET)?.cause).toBe("format");
    expect(diagnoseSignature(raw, "ab".repeat(32), SECRET)?.cause).toBe("sha256");
    expect(diagnoseSignature(raw, hmac(raw, "another-secret"), SECRET)).toBeNull();
  });
});
