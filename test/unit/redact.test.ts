import { describe, expect, it } from "vitest";
import { isCredentialName, redactHeaders, redactText, redactUrl } from "../../src/safe-text/redact.js";

const SECRET = "s3cr3t-value";

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
    const headers = {
      "x-api-key": "k",
      "api-key": "k",
      "x-auth-token": "t",
      authorization: "a",
      cookie: "c",
      "x-env": "ci",
      "x-other": "has-sec-ret",
      multi: ["a", "b"],
    };
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

// Shapes that made the old expression backtrack (long scheme-like runs, "/" runs with a "?" further
// on), and others that stress the scanner and redactUrl (many anchors, many query parameters).
const SHAPES: Record<string, (n: number) => string> = {
  letters: (n) => "a".repeat(n),
  "letters then ?": (n) => `${"a".repeat(n)} ?x`,
  "scheme characters": (n) => `${"a1+.-".repeat(n / 5)} ://`,
  "a scheme with nothing after": (n) => `${"a".repeat(n)}:// x`,
  slashes: (n) => `${"/".repeat(n)} ?x`,
  "path segments": (n) => `${"/a".repeat(n / 2)} ?x`,
  'many "://"': (n) => "a://".repeat(n / 4),
  'many "://" words': (n) => "a://x ".repeat(n / 6),
  'many "?"': (n) => "?".repeat(n),
  'many "?" words': (n) => "a?b ".repeat(n / 4),
  "a:a:a:": (n) => "a:".repeat(n / 2),
  "a:/a:/a:/": (n) => `${"a:/".repeat(n / 3)}?x`,
  "query parameters": (n) => `http://h/?${"a=1&".repeat(n / 4)}`,
  "credential parameters": (n) => `http://h/?${"accessToken=1&".repeat(n / 14)}`,
  "long userinfo": (n) => `http://${"a".repeat(n)}/x?y=1`,
  "at signs": (n) => `http://${"a@".repeat(n / 2)}?y=1`,
};

/**
 * The least CPU time (ms) of `runs` calls: the process's own user+sys time, not the wall clock, so
 * other processes on a loaded machine do not count (vitest runs this file in a process of its own).
 */
function bestTime(text: string, runs: number): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = process.cpuUsage();
    redactText(text, SECRET);
    const used = process.cpuUsage(started);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

describe("redactText on text a sender or a results file chose", () => {
  it("takes time linear in the length, whatever the text holds", () => {
    // Small enough that a quadratic scan fails here in seconds, not minutes.
    for (const [name, make] of Object.entries(SHAPES)) expect(bestTime(make(40_000), 1), name).toBeLessThan(100);
    for (const [name, make] of Object.entries(SHAPES)) {
      const n = bestTime(make(250_000), 3);
      const fourN = bestTime(make(1_000_000), 3);
      expect(fourN, `${name}: 1,000,000 characters`).toBeLessThan(1_000);
      // Linear is about 4 times; quadratic 16. The floor absorbs timer noise on tiny times.
      expect(fourN, `${name}: ${n.toFixed(1)} ms for 250,000 characters, ${fourN.toFixed(1)} ms for 1,000,000`).toBeLessThan(Math.max(8 * n, 50));
    }
  });

  it("still redacts the URL in a huge word", () => {
    const text = `${"a".repeat(100_000)}://h/?token=${SECRET}x`;
    expect(redactText(text, SECRET)).toBe(`${"a".repeat(100_000)}://h/?token=***`);
  });
});
