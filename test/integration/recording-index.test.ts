import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RecordingIndex } from "../../src/inspector/recording-index.js";
import { tempDir } from "../helpers/setup.js";

const files = tempDir("webhook-cli-recording-index-");

async function opened(text: string | Buffer, options: { maxLines?: number } = {}): Promise<RecordingIndex> {
  const path = join(files.dir, `r-${Math.random().toString(36).slice(2)}.ndjson`);
  writeFileSync(path, text);
  return RecordingIndex.open(path, options);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("RecordingIndex: where each line is, read again on demand", () => {
  it("indexes non-blank lines with their numbers (BOM, CRLF, blank lines, no final newline) and reads each again", async () => {
    const index = await opened(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\r\n\n{"b":"é"}\n   \n{"c":3}')]));
    try {
      expect(index.count).toBe(3);
      expect(await index.line(1)).toEqual({ id: 1, number: 1, text: '{"a":1}' });
      expect(await index.line(2)).toEqual({ id: 2, number: 3, text: '{"b":"é"}' });
      expect(await index.line(3)).toEqual({ id: 3, number: 5, text: '{"c":3}' });
      expect(await index.line(4)).toBeUndefined();
      expect((await all(index.backward(99))).map((line) => line.text)).toEqual(['{"c":3}', '{"b":"é"}', '{"a":1}']);
      expect((await all(index.backward(3))).map((line) => line.id)).toEqual([2, 1]);
    } finally {
      await index.close();
    }
  });

  it("skips (and names) lines over 1 MiB or not UTF-8, indexing the rest", async () => {
    const long = "x".repeat(1024 * 1024 + 10);
    const index = await opened(Buffer.concat([Buffer.from(`{"a":1}\n${long}\n`), Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from('{"b":2}\n')]));
    try {
      expect(index.count).toBe(2);
      expect(index.skipped).toBe(2);
      expect(index.skips).toEqual(["line 2: line is longer than 1048576 bytes (1 MiB)", "line 3: line is not valid UTF-8"]);
      expect((await index.line(2))?.text).toBe('{"b":2}');
    } finally {
      await index.close();
    }
  });

  it("reads backward in blocks: every line once, newest first, across block edges", async () => {
    // Lines of ~100 KB: a 1 MiB block holds about ten; 35 lines need several reads.
    const lines = Array.from({ length: 35 }, (_, i) => JSON.stringify({ i, pad: "p".repeat(100_000 + i) }));
    const index = await opened(`${lines.join("\n")}\n`);
    try {
      const read = await all(index.backward(Number.MAX_SAFE_INTEGER));
      expect(read.map((line) => line.id)).toEqual(Array.from({ length: 35 }, (_, i) => 35 - i));
      expect(read.every((line) => line.text === lines[line.id - 1])).toBe(true);
    } finally {
      await index.close();
    }
  });

  it("keeps at most maxLines entries: past it the oldest go, the newest stay, and the cost stays bounded", async () => {
    const count = 200_000;
    const index = await opened(`${Array.from({ length: count }, (_, i) => `{"n":${i + 1}}`).join("\n")}\n`, { maxLines: 2 * 65_536 });
    try {
      expect(index.count).toBe(count);
      expect(index.firstId).toBe(count - (count % 65_536) - 65_536 + 1);
      expect(index.bytes).toBe(2 * 65_536 * 16);
      expect(await index.line(1)).toBeUndefined();
      expect(await index.line(index.firstId)).toEqual({ id: index.firstId, number: index.firstId, text: `{"n":${index.firstId}}` });
      expect(await index.line(count)).toEqual({ id: count, number: count, text: `{"n":${count}}` });
      const oldest = await all(index.backward(index.firstId + 2));
      expect(oldest.map((line) => line.id)).toEqual([index.firstId + 1, index.firstId]);
    } finally {
      await index.close();
    }
  });
});
