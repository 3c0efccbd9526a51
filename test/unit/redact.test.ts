import { describe, expect, it } from "vitest";
import { isCredentialName, redactHeaders, redactText, redactUrl } from "../../src/util/redact.js";

describe("redaction", () => {
  it("recognises credential-like parameter names, as a whole or as a part", () => {
    for (const name of ["token", "KEY", "api_key", "access_token", "apiKey", "X-Auth", "client_secret", "sig", "password", "authToken", "apikey"]) {
      expect(isCredentialName(name), name).toBe(true);
    }
    for (const name of ["page", "user", "id", "keyboard", "monkeys"]) expect(isCredentialName(name), name).toBe(false);
  });

  it("masks userinfo passwords, credential query values and the secret; leaves the rest byte for byte", () => {
    expect(redactUrl("https://alice:pw@example.com/hook?a=1&token=t0k&b=%20#frag")).toBe("https://alice:***@example.com/hook?a=1&token=***&b=%20#frag");
    expect(redactUrl("/hook?api_key=k&page=2")).toBe("/hook?api_key=***&page=2");
    expect(redactUrl("/hooks/s3cr3t/in?x", "s3cr3t")).toBe("/hooks/***/in?x");
    expect(redactUrl("/plain")).toBe("/plain");
  });

  it("redacts every URL inside a line of text", () => {
    const line = `{"url":"http://h/x?access_token=abc","error":"ECONNREFUSED"} then https://u:p@h/?sig=z`;
    expect(redactText(line)).toBe(`{"url":"http://h/x?access_token=***","error":"ECONNREFUSED"} then https://u:***@h/?sig=***`);
  });

  it("redacts credential headers and any header holding the secret", () => {
    const headers = { "x-api-key": "k", "api-key": "k", "x-auth-token": "t", authorization: "a", cookie: "c", "x-env": "ci", "x-other": "has-sec-ret", multi: ["a", "b"] };
    expect(redactHeaders(headers, "sec-ret")).toEqual({
      "x-api-key": "[redacted]",
      "api-key": "[redacted]",
      "x-auth-token": "[redacted]",
      authorization: "[redacted]",
      cookie: "[redacted]",
      "x-env": "ci",
      "x-other": "[redacted]",
      multi: ["a", "b"],
    });
  });
});
