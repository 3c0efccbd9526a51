import { describe, expect, it } from "vitest";
import { EXCERPT_BYTES, excerptOf, statusError } from "../../src/delivery/answer-excerpt.js";

describe("the reason of a 4xx answer (docs/delivery.md#attempt-outcomes)", () => {
  it("quotes a 4xx body's start on one line; other statuses and empty or binary bodies are the status alone", () => {
    expect(statusError(401, '{"error": "X-Signature does not match the body"}\n')).toBe('HTTP 401: {"error": "X-Signature does not match the body"}');
    expect(statusError(422, "  bad\r\n\tline  two ")).toBe("HTTP 422: bad line two");
    expect(statusError(500, "upstream exploded")).toBe("HTTP 500");
    expect(statusError(302, "moved")).toBe("HTTP 302");
    expect(statusError(400, "")).toBe("HTTP 400");
    expect(statusError(400, " \n ")).toBe("HTTP 400");
    expect(statusError(400)).toBe("HTTP 400");
    expect(statusError(400, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe("HTTP 400");
    expect(statusError(400, "a\0b")).toBe("HTTP 400");
  });

  it("is bounded: 200 characters of the first 512 bytes, and … when there is more", () => {
    expect(excerptOf("x".repeat(200))).toBe("x".repeat(200));
    expect(excerptOf("x".repeat(201))).toBe(`${"x".repeat(200)}…`);
    // More bytes than are read: the cut is said even when what is shown is short.
    expect(excerptOf(`${"  ".repeat(EXCERPT_BYTES / 2)}tail`)).toBe("");
    expect(excerptOf(`short ${" ".repeat(EXCERPT_BYTES)}more`)).toBe("short…");
    // A character cut by the byte bound is dropped, not taken for binary.
    const euros = Buffer.from("€".repeat(200));
    expect(euros.length).toBeGreaterThan(EXCERPT_BYTES);
    expect(excerptOf(euros)).toBe(`${"€".repeat(170)}…`);
  });

  it("is printable and redacted: control characters escaped, URL credentials masked before the cut", () => {
    expect(excerptOf("\x1b]52;c;aGk=\x07\x1b[2J denied")).toBe("\\e]52;c;aGk=\\x07\\e[2J denied");
    expect(excerptOf("\u202eevil")).toBe("\\u{202e}evil");
    expect(excerptOf("see https://admin:hunter2@example.com/x?token=abc")).toBe("see https://admin:***@example.com/x?token=***");
    const long = `${"y".repeat(190)} https://admin:hunter2@example.com/`;
    expect(excerptOf(long)).not.toContain("hunter2".slice(0, 3));
  });
});
