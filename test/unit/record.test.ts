import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeError } from "../../src/cli/shell/exit-codes.js";
import { WebhookCliError } from "../../src/errors.js";
import { formatRecordLine, RecordingFile, REDACTED } from "../../src/receiver/record.js";
import { judgeRequest } from "../../src/receiver/verdict.js";

const SECRET = "top-secret-value";
const at = new Date("2024-05-01T10:00:00.000Z");

function line(rawText: string | Buffer, headers: Record<string, string> = {}) {
  const raw = typeof rawText === "string" ? Buffer.from(rawText) : rawText;
  const verdict = judgeRequest(raw, headers, { secret: SECRET });
  const text = formatRecordLine({
    receivedAt: at,
    method: "POST",
    path: "/hooks?x=1",
    headers,
    signatureValid: verdict.signatureValid,
    raw,
    text: verdict.text,
    body: verdict.body,
    secret: SECRET,
  });
  return { text, parsed: JSON.parse(text) as Record<string, unknown> };
}

describe("formatRecordLine", () => {
  it("writes the envelope of docs/recording.md#recording-line on one line, without rawBody for compact JSON", () => {
    const body = JSON.stringify({ type: "delete", userId: "u1", timestamp: "2024-01-01T00:00:00.000Z" });
    const { text, parsed } = line(body, { "content-type": "application/json", "x-signature": "abc" });
    expect(text.endsWith("}\n")).toBe(true);
    expect(text.indexOf("\n")).toBe(text.length - 1);
    expect(parsed).toEqual({
      receivedAt: "2024-05-01T10:00:00.000Z",
      method: "POST",
      path: "/hooks?x=1",
      headers: { "content-type": "application/json", "x-signature": "abc" },
      signatureValid: false,
      body: JSON.parse(body),
    });
  });

  it("adds rawBody (base64 of the exact bytes) when they differ from JSON.stringify(body)", () => {
    for (const raw of ['{ "a": 1 }', '{"a":1.50}', '{"s":"caf\\u00e9"}', '{"a":1}\n']) {
      const { parsed } = line(raw);
      expect(Buffer.from(parsed["rawBody"] as string, "base64").toString()).toBe(raw);
      expect(parsed["body"]).toEqual(JSON.parse(raw));
    }
  });

  it("keeps invalid JSON and non-UTF-8 bodies as rawBody with body null", () => {
    const { parsed } = line("{oops");
    expect(parsed["body"]).toBeNull();
    expect(Buffer.from(parsed["rawBody"] as string, "base64").toString()).toBe("{oops");
    const latin1 = Buffer.from('{"n":"caf\xe9"}', "latin1");
    const second = line(latin1).parsed;
    expect(second["body"]).toBeNull();
    expect(Buffer.from(second["rawBody"] as string, "base64").equals(latin1)).toBe(true);
  });

  it("redacts credentials and never writes the secret", () => {
    const { text, parsed } = line("{}", {
      authorization: "Bearer abc",
      cookie: "session=1",
      "proxy-authorization": "Basic xyz",
      "x-shared": `key ${SECRET}`,
      "x-env": "ci",
    });
    expect(parsed["headers"]).toEqual({ authorization: REDACTED, cookie: REDACTED, "proxy-authorization": REDACTED, "x-shared": REDACTED, "x-env": "ci" });
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("Bearer abc");
  });
});

describe("RecordingFile", () => {
  it("appends lines to an existing file", () => {
    const dir = mkdtempSync(join(tmpdir(), "webhook-cli-record-"));
    try {
      const path = join(dir, "r.ndjson");
      const first = RecordingFile.open(path);
      first.append("one\n");
      first.close();
      const second = RecordingFile.open(path);
      second.append("two\n");
      second.close();
      second.append("ignored after close\n");
      expect(readFileSync(path, "utf8")).toBe("one\ntwo\n");
      let error: unknown;
      try {
        RecordingFile.open(join(dir, "missing", "r.ndjson"));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(WebhookCliError);
      expect(describeError(error as WebhookCliError)).toMatch(/r\.ndjson: --record: cannot open for appending/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
