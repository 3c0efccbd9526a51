import { open, type FileHandle } from "node:fs/promises";
import { readLineBatches } from "../util/ndjson.js";

/** Lines per chunk of the index: chunks are allocated whole and dropped whole. */
const CHUNK = 65_536;
/** Lines indexed at most (16 bytes each: 64 MiB); past it the oldest chunks are dropped, the newest lines kept. */
export const MAX_INDEXED_LINES = 64 * CHUNK;
/** How many bytes a backward scan reads at once (a block of whole lines; one longer line is read alone). */
const BLOCK_BYTES = 1024 * 1024;
/** Lines skipped at indexing (too long, not UTF-8) named in the notice; the rest are counted. */
const NAMED_SKIPS = 5;

/** One indexed line, read again from the file. */
export interface IndexedLine {
  /** 1-based position among the indexed lines: the inspector's row id. */
  id: number;
  /** The line's number in the file (blank lines count). */
  number: number;
  text: string;
}

/**
 * A recording file (docs/recording.md#recording-line) as the inspector opens it: each non-blank
 * line's byte offset, length and number, never its text, so memory grows by 16 bytes a line
 * whatever the lines hold, up to MAX_INDEXED_LINES. Lines are read again, one at a time or in
 * blocks, when shown or searched. The file is opened read-only and never written.
 */
export class RecordingIndex {
  private readonly offsets: Float64Array[] = [];
  private readonly lengths: Uint32Array[] = [];
  private readonly numbers: Uint32Array[] = [];
  private droppedChunks = 0;
  /** Lines indexed so far, the dropped ones included: the newest line's id. */
  count = 0;
  /** Lines the splitter refused (over 1 MiB, not UTF-8), and the first few reasons. */
  skipped = 0;
  readonly skips: string[] = [];
  /** Bytes of the file when it was indexed. */
  size = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly maxLines: number,
  ) {}

  /** Reads the file once, keeping only where each line is (`maxLines`, a multiple of 65,536, for tests). */
  static async open(path: string, options: { maxLines?: number } = {}): Promise<RecordingIndex> {
    const handle = await open(path, "r");
    const index = new RecordingIndex(path, handle, Math.max(CHUNK, options.maxLines ?? MAX_INDEXED_LINES));
    try {
      for await (const lines of readLineBatches(path, { offsets: true })) {
        for (const line of lines) {
          if ("error" in line) index.skip(`line ${line.number}: ${line.error}`);
          else index.push(line.offset ?? 0, Buffer.byteLength(line.text), line.number);
        }
      }
      index.size = (await handle.stat()).size;
    } catch (error) {
      await handle.close();
      throw error;
    }
    return index;
  }

  /** The oldest id still indexed (older ones were dropped past MAX_INDEXED_LINES). */
  get firstId(): number {
    return this.droppedChunks * CHUNK + 1;
  }

  /** What the index costs in memory. */
  get bytes(): number {
    return this.offsets.length * CHUNK * 16;
  }

  has(id: number): boolean {
    return Number.isInteger(id) && id >= this.firstId && id <= this.count;
  }

  /** Line `id`, read again; undefined when not indexed. Throws when the file no longer holds it. */
  async line(id: number): Promise<IndexedLine | undefined> {
    if (!this.has(id)) return undefined;
    const { offset, length, number } = this.at(id);
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = await this.handle.read(buffer, 0, length, offset);
    if (bytesRead < length) throw new Error(`${this.path} is shorter than when it was opened: line ${number} is gone`);
    return { id, number, text: buffer.toString("utf8") };
  }

  /** The lines before `before` (exclusive), newest first, read in blocks of about 1 MiB. */
  async *backward(before: number): AsyncGenerator<IndexedLine> {
    let id = Math.min(before - 1, this.count);
    while (id >= this.firstId) {
      const last = this.at(id);
      const end = last.offset + last.length;
      let low = id;
      while (low - 1 >= this.firstId && end - this.at(low - 1).offset <= BLOCK_BYTES) low -= 1;
      const start = this.at(low).offset;
      const block = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await this.handle.read(block, 0, block.length, start);
      if (bytesRead < block.length) throw new Error(`${this.path} is shorter than when it was opened`);
      for (let i = id; i >= low; i--) {
        const { offset, length, number } = this.at(i);
        yield { id: i, number, text: block.toString("utf8", offset - start, offset - start + length) };
      }
      id = low - 1;
    }
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  private push(offset: number, length: number, number: number): void {
    const slot = this.count % CHUNK;
    if (slot === 0) {
      this.offsets.push(new Float64Array(CHUNK));
      this.lengths.push(new Uint32Array(CHUNK));
      this.numbers.push(new Uint32Array(CHUNK));
      if (this.offsets.length * CHUNK > this.maxLines) {
        this.offsets.shift();
        this.lengths.shift();
        this.numbers.shift();
        this.droppedChunks += 1;
      }
    }
    const chunk = this.offsets.length - 1;
    (this.offsets[chunk] as Float64Array)[slot] = offset;
    (this.lengths[chunk] as Uint32Array)[slot] = length;
    (this.numbers[chunk] as Uint32Array)[slot] = number;
    this.count += 1;
  }

  private skip(reason: string): void {
    this.skipped += 1;
    if (this.skips.length < NAMED_SKIPS) this.skips.push(reason);
  }

  private at(id: number): { offset: number; length: number; number: number } {
    const chunk = Math.floor((id - 1) / CHUNK) - this.droppedChunks;
    const slot = (id - 1) % CHUNK;
    return {
      offset: (this.offsets[chunk] as Float64Array)[slot] as number,
      length: (this.lengths[chunk] as Uint32Array)[slot] as number,
      number: (this.numbers[chunk] as Uint32Array)[slot] as number,
    };
  }
}
