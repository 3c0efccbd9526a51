import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LineSplitter, MAX_LINE_BYTES, readLineBatches, type Line } from "../../src/util/ndjson.js";

function split(chunks: (string | Buffer)[]): Line[] {
  const splitter = new LineSplitter();
  const lines: Line[] = [];
  for (const chunk of chunks) lines.push(...splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
  lines.push(...splitter.end());
  return lines;
}

describe("LineSplitter", () => {
  it("numbers lines from 1 counting blank lines, and skips the blank ones", () => {
    expect(split(['{"a":1}\n\n  \n{"b":2}\n'])).toEqual([
      { number: 1, text: '{"a":1}' },
      { number: 4, text: '{"b":2}' },
    ]);
  });

  it("strips a leading BOM and trailing \\r, keeps a last line without newline", () => {
    expect(split(['\uFEFF{"a":1}\r\n{"b":2}\r\n{"c":3}'])).toEqual([
      { number: 1, text: '{"a":1}' },
      { number: 2, text: '{"b":2}' },
      { number: 3, text: '{"c":3}' },
    ]);
  });

  it("joins lines split across chunks, including a multi-byte character cut in two", () => {
    const bytes = Buffer.from('{"name":"Zoë ✓"}\n{"x":1}\n');
    const lines = split([bytes.subarray(0, 12), bytes.subarray(12, 20), bytes.subarray(20)]);
    expect(lines).toEqual([
      { number: 1, text: '{"name":"Zoë ✓"}' },
      { number: 2, text: '{"x":1}' },
    ]);
  });

  it("reports invalid UTF-8 with its line number", () => {
    const lines = split([Buffer.concat([Buffer.from('{"a":1}\n{"b":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')])]);
    expect(lines).toEqual([
      { number: 1, text: '{"a":1}' },
      { number: 2, error: "line is not valid UTF-8" },
    ]);
  });

  it("reports a line over 1 MiB without keeping it, and goes on with the next", () => {
    const splitter = new LineSplitter();
    const lines: Line[] = [];
    lines.push(...splitter.push(Buffer.from('{"a":1}\n"')));
    const piece = Buffer.alloc(256 * 1024, 0x61);
    for (let i = 0; i < 5; i++) lines.push(...splitter.push(piece));
    lines.push(...splitter.push(Buffer.from('"\n{"b":2}\n')));
    lines.push(...splitter.end());
    expect(lines).toEqual([
      { number: 1, text: '{"a":1}' },
      { number: 2, error: `line is longer than ${MAX_LINE_BYTES} bytes (1 MiB)` },
      { number: 3, text: '{"b":2}' },
    ]);
  });

  it("accepts a line of exactly 1 MiB, even with a trailing \\r", () => {
    const body = "x".repeat(MAX_LINE_BYTES);
    const lines = split([body.slice(0, 1000), `${body.slice(1000)}\r\n`]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ number: 1 });
    expect((lines[0] as { text: string }).text.length).toBe(MAX_LINE_BYTES);
  });
});

describe("LineSplitter offsets, and starting mid-file", () => {
  const bytes = Buffer.from('\uFEFF{"a":1}\r\n\n{"name":"Zoë ✓"}\n{"c":3}');

  function splitWithOffsets(source: Buffer, chunkSize: number, start?: { offset: number; line: number }): Line[] {
    const splitter = new LineSplitter({ offsets: true, ...(start ? { start } : {}) });
    const lines: Line[] = [];
    for (let at = start?.offset ?? 0; at < source.length; at += chunkSize)
      lines.push(...splitter.push(source.subarray(at, Math.min(at + chunkSize, source.length))));
    lines.push(...splitter.end());
    return lines;
  }

  it("gives each line the file offset of its first byte, whatever the chunks (BOM, CRLF, a line across reads)", () => {
    // From 3 bytes on: a BOM cut across reads is not looked for.
    for (const chunkSize of [3, 4, 5, 7, 64]) {
      const lines = splitWithOffsets(bytes, chunkSize);
      expect(lines.map((l) => "text" in l && [l.number, l.offset])).toEqual([
        [1, 3],
        [3, 13],
        [4, 33],
      ]);
      // Each offset and the text's length find the line's bytes again.
      for (const line of lines) {
        if (!("text" in line)) throw new Error("unexpected error line");
        const at = line.offset as number;
        expect(bytes.subarray(at, at + Buffer.byteLength(line.text)).toString()).toBe(line.text);
      }
    }
  });

  it("starts at a line's offset with its number, looking for no BOM there", () => {
    expect(splitWithOffsets(bytes, 4, { offset: 13, line: 3 })).toEqual([
      { number: 3, text: '{"name":"Zoë ✓"}', offset: 13 },
      { number: 4, text: '{"c":3}', offset: 33 },
    ]);
  });

  it("adds no offset unless asked (the replay's own passes)", () => {
    expect(split(['{"a":1}\n'])).toEqual([{ number: 1, text: '{"a":1}' }]);
  });
});

describe("readLineBatches", () => {
  it("streams a file's lines in batches", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ndjson-"));
    const file = join(dir, "in.ndjson");
    const rows = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ i, pad: "p".repeat(i % 50) }));
    writeFileSync(file, `${rows.join("\n")}\n`);
    const seen: Line[] = [];
    let batches = 0;
    for await (const batch of readLineBatches(file)) {
      batches += 1;
      seen.push(...batch);
    }
    expect(batches).toBeGreaterThan(1);
    expect(seen).toHaveLength(5000);
    expect(seen[4999]).toEqual({ number: 5000, text: rows[4999] });
  });
});
