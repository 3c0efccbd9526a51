import { describe, expect, it } from "vitest";
import { checkLine, deadLetterLine, parseEntry } from "../../src/replay/envelope.js";

const track = { version: 1, type: "track", userId: "u1", event: "Signed Up", properties: { plan: "pro" }, timestamp: "2024-01-01T00:00:00.000Z" };

describe("parseEntry", () => {
  it("sends JSON.stringify of a bare message (compact form)", () => {
    const result = parseEntry(JSON.stringify(track, null, 1).replace(/\n/g, ""), 4, true);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.entry.body).toBe(JSON.stringify(track));
    expect(result.entry).toMatchObject({ line: 4, type: "track", orderKey: "u1", time: Date.parse(track.timestamp) });
  });

  it("sends the rawBody bytes of a recording envelope, timed by receivedAt", () => {
    const raw = Buffer.from('{ "version":1,"type":"track","userId":"u1","event":"\\u0041","properties":{},"timestamp":"2024-01-01T00:00:00.000Z" }');
    const envelope = {
      receivedAt: "2024-02-02T00:00:00.000Z",
      method: "POST",
      path: "/",
      headers: {},
      signatureValid: true,
      body: JSON.parse(raw.toString()),
      rawBody: raw.toString("base64"),
    };
    const result = parseEntry(JSON.stringify(envelope), 1, true);
    expect(result.ok && Buffer.compare(result.entry.body as Buffer, raw) === 0).toBe(true);
    expect(result.ok && result.entry.time).toBe(Date.parse("2024-02-02T00:00:00.000Z"));
  });

  it("sends JSON.stringify(body) of an envelope without rawBody", () => {
    const result = parseEntry(JSON.stringify({ receivedAt: "2024-02-02T00:00:00.000Z", body: track }), 1, true);
    expect(result.ok && result.entry.body).toBe(JSON.stringify(track));
  });

  it("names the reason for bad lines", () => {
    expect(parseEntry("{nope", 1, true)).toMatchObject({ ok: false, reason: expect.stringMatching(/^not JSON/) });
    expect(parseEntry("[1]", 1, true)).toMatchObject({ ok: false, reason: expect.stringContaining("expected a JSON object") });
    expect(parseEntry('{"type":"bogus"}', 1, true)).toMatchObject({ ok: false, reason: expect.stringContaining("not a known message") });
    expect(parseEntry(JSON.stringify({ ...track, event: undefined }), 1, true)).toMatchObject({ ok: false, reason: expect.stringContaining('"event"') });
    expect(parseEntry(JSON.stringify({ body: null, rawBody: Buffer.from("{oops").toString("base64") }), 1, true)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("rawBody"),
    });
    expect(parseEntry(JSON.stringify({ body: track, rawBody: "@@@" }), 1, true)).toMatchObject({ ok: false, reason: expect.stringContaining("base64") });
  });

  it("uses the alias's new id as the order key", () => {
    const alias = { version: 1, type: "alias", "Previous ID": "a", "User ID": "b", timestamp: track.timestamp };
    expect(parseEntry(JSON.stringify(alias), 1, true)).toMatchObject({ ok: true, entry: { orderKey: "b" } });
  });
});

describe("deadLetterLine", () => {
  it("wraps a bare message in an envelope with the failure, and replays to the same body", () => {
    const line = deadLetterLine(JSON.stringify(track), { reason: "HTTP 503", attempts: 3, status: 503 });
    expect(JSON.parse(line)).toEqual({ body: track, failure: { reason: "HTTP 503", attempts: 3, status: 503 } });
    expect(parseEntry(line, 1, true)).toMatchObject({ ok: true, entry: { body: JSON.stringify(track) } });
  });

  it("keeps a recording's envelope and rawBody, replacing an older failure", () => {
    const raw = Buffer.from(` ${JSON.stringify(track)}`);
    const envelope = {
      receivedAt: "2024-02-02T00:00:00.000Z",
      body: track,
      rawBody: raw.toString("base64"),
      failure: { reason: "old", attempts: 1, status: null },
    };
    const line = deadLetterLine(JSON.stringify(envelope), { reason: "interrupted", attempts: 0, status: null });
    expect(JSON.parse(line)).toEqual({ ...envelope, failure: { reason: "interrupted", attempts: 0, status: null } });
    const result = parseEntry(line, 1, true);
    expect(result.ok && Buffer.compare(result.entry.body as Buffer, raw)).toBe(0);
  });
});

describe("replay --raw (parseEntry/checkLine with raw)", () => {
  it("a line that is not a known message is sent as read, with the reason as a warning", () => {
    const notJson = parseEntry("not json {", 4, true, {}, true);
    expect(notJson).toMatchObject({ ok: true, entry: { body: "not json {", type: undefined, line: 4 } });
    expect(notJson.ok && notJson.warning).toMatch(/^not JSON/);
    const invalid = '{"type":"track","userId":"u"}';
    expect(parseEntry(invalid, 1, true, {}, true)).toMatchObject({ ok: true, entry: { body: invalid, type: undefined } });
    expect(checkLine(invalid, 1, true)).toMatchObject({ ok: true, type: undefined, warning: expect.stringContaining('"event"') });
    expect(checkLine(invalid, 1).ok).toBe(false);
  });

  it("an envelope's recorded rawBody (not JSON) goes out byte for byte; a bad body as its JSON", () => {
    const bytes = Buffer.from("garbage\u00e9\n");
    const recorded = JSON.stringify({ receivedAt: "2024-01-01T00:00:00.000Z", body: null, rawBody: bytes.toString("base64") });
    const result = parseEntry(recorded, 1, true, {}, true);
    expect(result.ok && Buffer.compare(result.entry.body as Buffer, bytes)).toBe(0);
    const badBody = JSON.stringify({ body: { type: "page" } });
    expect(parseEntry(badBody, 1, true, {}, true)).toMatchObject({ ok: true, entry: { body: '{"type":"page"}' } });
  });
});
