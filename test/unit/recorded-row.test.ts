import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { rowFromLine } from "../../src/receiver/history/recorded-row.js";
import { search, type Candidate } from "../../src/inspector/search.js";
import { inspectedRow } from "../../src/receiver/history/store.js";
import { formatRecordLine } from "../../src/receiver/record.js";
import { TRACK } from "../helpers/messages.js";

const SECRET = "recorded-secret";
const hmac = (body: string | Buffer) => createHmac("sha1", SECRET).update(body).digest("hex");

function line(body: string, fields: { signatureValid?: boolean | null; method?: string; signature?: string; response?: Record<string, unknown> } = {}): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  return formatRecordLine({
    receivedAt: new Date("2026-01-02T03:04:05.678Z"),
    method: fields.method ?? "POST",
    path: "/hooks?x=1",
    headers: { "content-type": "application/json", "x-signature": fields.signature ?? hmac(body) },
    signatureValid: fields.signatureValid ?? true,
    signatureRule: Array.isArray(parsed) ? "first-element" : "body",
    raw: Buffer.from(body),
    text: body,
    body: parsed,
    ...(fields.response ? { response: fields.response } : {}),
  }).trimEnd();
}

describe("rowFromLine: a recording line as an inspector row (docs/recording.md#recording-line)", () => {
  it("the bytes received (rawBody when recorded), method, path and headers; checked again with the secret", () => {
    const spaced = '{ "type": "track", "userId": "u", "event": "E", "properties": {}, "version": 1, "timestamp": "2024-01-01T00:00:00.000Z" }';
    const row = rowFromLine(line(spaced, { method: "PUT" }), 7, { secret: SECRET, strict: false });
    expect(row.raw.toString()).toBe(spaced);
    expect(row).toMatchObject({ method: "PUT", path: "/hooks?x=1", receivedAt: new Date("2026-01-02T03:04:05.678Z"), status: null, response: null });
    expect(row.verdict).toMatchObject({ signatureValid: true, signatureRule: "body", type: "track", valid: true });
    const forged = rowFromLine(line(spaced, { signature: "0".repeat(40) }), 8, { secret: SECRET, strict: false });
    expect(forged.verdict).toMatchObject({ signatureValid: false, valid: false });
  });

  it("without a secret, shows the recorded verdict and a batch's recorded rule", () => {
    const batch = `[${JSON.stringify(TRACK)}]`;
    const recorded = rowFromLine(line(batch, { signature: hmac(JSON.stringify(TRACK)) }), 1, { secret: undefined, strict: false });
    expect(recorded.verdict).toMatchObject({ signatureValid: true, signatureRule: "first-element", bodyKind: "batch", valid: true });
    const failed = rowFromLine(line(JSON.stringify(TRACK), { signatureValid: false }), 2, { secret: undefined, strict: false });
    expect(failed.verdict).toMatchObject({ signatureValid: false, signatureRule: null, valid: false });
    expect(failed.verdict.signatureError).toMatch(/failed when recorded/);
  });

  it("keeps the app's recorded answer as the row's response, its status as the answer the sender got", () => {
    const response = { status: 201, ms: 12, headers: { "content-type": "application/json" }, body: '{"id":7}' };
    const row = rowFromLine(line(JSON.stringify(TRACK), { response }), 3, { secret: SECRET, strict: false });
    expect(row.status).toBe(201);
    expect(row.response).toMatchObject({ status: 201, ms: 12, error: null, bodySize: 8 });
    expect(row.response?.body?.toString()).toBe('{"id":7}');
    const down = rowFromLine(line(JSON.stringify(TRACK), { response: { status: null, ms: 3, error: "connection refused" } }), 4, {
      secret: SECRET,
      strict: false,
    });
    expect(down.response).toMatchObject({ status: null, error: "connection refused" });
  });

  it("a bare message line is a POST of its JSON; a line that is no recording line is an invalid row saying why", () => {
    const bare = rowFromLine(JSON.stringify(TRACK), 1, { secret: undefined, strict: false });
    expect(bare).toMatchObject({ method: "POST", path: "/", receivedAt: new Date(TRACK.timestamp) });
    expect(bare.verdict).toMatchObject({ type: "track", valid: true });
    const junk = rowFromLine("{not json", 12, { secret: undefined, strict: false });
    expect(junk.verdict).toMatchObject({ valid: false, bodyKind: "invalid" });
    expect(junk.verdict.shapeErrors[0]?.message).toMatch(/^line 12 is not JSON/);
    expect(rowFromLine("[1,2]", 13, { secret: undefined, strict: false }).verdict.shapeErrors[0]?.message).toMatch(/not a recording line/);
  });
});

describe("search: bounded in matches and in bytes, going on from `next`", () => {
  const rows = Array.from({ length: 10 }, (_, i) => {
    const body = JSON.stringify({ ...TRACK, userId: i % 2 === 0 ? `even-${i}` : `odd-${i}` });
    return inspectedRow(i + 1, { ...rowFromLine(line(body), i + 1, { secret: SECRET, strict: false }), label: String(i + 1) });
  });
  async function* newestFirst(before = 11): AsyncGenerator<Candidate> {
    for (let id = before - 1; id >= 1; id--) {
      const row = rows[id - 1];
      if (row) yield { id, text: row.raw.toString(), row: () => Promise.resolve(row) };
    }
  }
  // Not "even": every body's "event" holds that.
  const query = { text: "even-", type: "", verdict: "" };

  it("finds matches newest first, and stops at the row bound with where to go on", async () => {
    const first = await search(newestFirst(), query, { rows: 2 });
    expect(first.rows.map((row) => row.userId)).toEqual(["even-8", "even-6"]);
    expect(first.next).toBe(7);
    const rest = await search(newestFirst(first.next ?? 0), query, { rows: 10 });
    expect(rest.rows.map((row) => row.userId)).toEqual(["even-4", "even-2", "even-0"]);
    expect(rest.next).toBeNull();
  });

  it("stops at the byte bound too: a search of a large file goes on in steps", async () => {
    const three = [10, 9, 8].reduce((sum, id) => sum + (rows[id - 1]?.raw.length ?? 0), 0);
    const step = await search(newestFirst(), query, { bytes: three });
    expect(step.scanned).toBe(three);
    expect(step.next).toBe(8);
    expect(step.rows.map((row) => row.userId)).toEqual(["even-8"]);
  });

  it("filters by type and verdict as the page's selects do", async () => {
    expect((await search(newestFirst(), { text: "", type: "identify", verdict: "" })).rows).toEqual([]);
    expect((await search(newestFirst(), { text: "odd-3", type: "track", verdict: "valid" })).rows.map((row) => row.label)).toEqual(["4"]);
    expect((await search(newestFirst(), { text: "", type: "", verdict: "invalid" })).rows).toEqual([]);
  });
});
