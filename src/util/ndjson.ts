import { isUtf8 } from "node:buffer";
import { open } from "node:fs/promises";

/** docs/recording.md#invalid-lines: a line longer than this (without its line ending) is refused. */
export const MAX_LINE_BYTES = 1024 * 1024;

/**
 * One non-blank line of an NDJSON file, numbered from 1 (blank lines count).
 * `offset` (only when the splitter was asked for offsets): where the line's
 * first byte is in the file, so the line can be read again on its own.
 */
export type Line = { number: number; text: string; offset?: number } | { number: number; error: string };

/** Where a splitter starts reading mid-file: at a line's first byte, with that line's number. */
export interface SplitStart {
  offset: number;
  line: number;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Splits bytes into numbered lines (pure, incremental). Memory stays bounded:
 * a partial line is kept only up to MAX_LINE_BYTES; beyond that its bytes are
 * dropped and the line is reported as too long when its end arrives.
 */
export class LineSplitter {
  private number = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overflow = false;
  private first = true;
  /** The file offset of the next chunk's first byte, and of the pending line's. */
  private base = 0;
  private pendingOffset = 0;
  private readonly offsets: boolean;

  /** `start`: the bytes pushed begin at that line (no BOM is looked for); `offsets`: lines carry their offset. */
  constructor(options: { start?: SplitStart | undefined; offsets?: boolean | undefined } = {}) {
    this.offsets = options.offsets === true;
    if (options.start) {
      this.number = options.start.line - 1;
      this.base = options.start.offset;
      this.first = false;
    }
  }

  /** Lines completed by this chunk. The chunk may be reused by the caller afterwards. */
  push(chunk: Uint8Array): Line[] {
    let buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const base = this.base;
    this.base += buf.length;
    let skipped = 0;
    if (this.first) {
      // A BOM split across chunks is not worth handling: reads are ≥ 3 bytes in practice.
      if (buf.length === 0) return [];
      this.first = false;
      if (buf.length >= 3 && buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2]) {
        buf = buf.subarray(3);
        skipped = 3;
      }
    }
    const lines: Line[] = [];
    let start = 0;
    for (;;) {
      const end = buf.indexOf(NEWLINE, start);
      if (end === -1) break;
      this.number += 1;
      if (this.pendingBytes === 0 && !this.overflow) {
        this.emit(lines, buf, start, end, base + skipped + start);
      } else {
        this.keep(buf.subarray(start, end));
        this.emitPending(lines);
      }
      start = end + 1;
    }
    if (start < buf.length) {
      if (this.pendingBytes === 0 && !this.overflow) this.pendingOffset = base + skipped + start;
      this.keep(buf.subarray(start));
    }
    return lines;
  }

  /** The last line when the file does not end with a newline. */
  end(): Line[] {
    if (this.pendingBytes === 0 && !this.overflow) return [];
    this.number += 1;
    const lines: Line[] = [];
    this.emitPending(lines);
    return lines;
  }

  private keep(part: Buffer): void {
    if (this.overflow) return;
    // +1 leaves room for a trailing \r that is stripped later.
    if (this.pendingBytes + part.length > MAX_LINE_BYTES + 1) {
      this.overflow = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    // Copy: the caller may reuse its read buffer.
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }

  private emitPending(lines: Line[]): void {
    if (this.overflow) {
      lines.push({ number: this.number, error: `line is longer than ${MAX_LINE_BYTES} bytes (1 MiB)` });
    } else {
      const joined = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
      this.emit(lines, joined, 0, joined.length, this.pendingOffset);
    }
    this.pending = [];
    this.pendingBytes = 0;
    this.overflow = false;
  }

  private emit(lines: Line[], buf: Buffer, start: number, end: number, offset: number): void {
    if (end > start && buf[end - 1] === CR) end -= 1;
    if (end === start) return; // blank line: numbered, skipped
    if (end - start > MAX_LINE_BYTES) {
      lines.push({ number: this.number, error: `line is longer than ${MAX_LINE_BYTES} bytes (1 MiB)` });
      return;
    }
    const bytes = buf.subarray(start, end);
    if (!isUtf8(bytes)) {
      lines.push({ number: this.number, error: "line is not valid UTF-8" });
      return;
    }
    const text = bytes.toString("utf8");
    // Whitespace-only lines are blank too (checked only when it could be one, to keep the hot path lean).
    const first = text.charCodeAt(0);
    if ((first === 0x20 || first === 0x09) && text.trim() === "") return;
    lines.push(this.offsets ? { number: this.number, text, offset } : { number: this.number, text });
  }
}

export const READ_CHUNK_BYTES = 64 * 1024;

/**
 * Streams a file's lines in batches (one batch per read), with constant memory
 * whatever the file's size. Stops early when `signal` is aborted.
 */
export async function* readLineBatches(path: string, options: { signal?: AbortSignal; offsets?: boolean } = {}): AsyncGenerator<Line[]> {
  const handle = await open(path, "r");
  try {
    const splitter = new LineSplitter({ offsets: options.offsets === true });
    const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    for (;;) {
      if (options.signal?.aborted) return;
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const lines = splitter.push(buffer.subarray(0, bytesRead));
      if (lines.length > 0) yield lines;
    }
    const last = splitter.end();
    if (last.length > 0) yield last;
  } finally {
    await handle.close();
  }
}
