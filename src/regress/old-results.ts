import { closeSync, openSync, readSync } from "node:fs";
import { ReadyHeap } from "../dispatch/heap.js";
import { InputError } from "../errors.js";
import type { OldAnswers } from "./run-comparison.js";
import { LineSplitter, READ_CHUNK_BYTES, type Line, type SplitStart } from "../util/ndjson.js";
import { parseAnswerLine, quickKey, type Answer, type ResultsIndex } from "./results-read.js";

/**
 * The --compare file read beside the replay (docs/recording.md#comparing-results):
 * a merge of its runs in line order (ResultsIndex, from the scan before
 * anything was sent), the later of two answers for one line winning. Each
 * old answer is read when the replay reaches its line and dropped after it,
 * so the file costs a read buffer per run (64 KiB for one, shrinking to 4 KiB
 * as runs multiply: MAX_RUNS of them hold about 8 MiB), never its size.
 *
 * Reads are synchronous: the comparison runs inside the replay's result hook,
 * a chunk at a time from the page cache.
 */

export interface OldResultsOptions {
  /** Lines this run can send (the selection's lineMayMatch): others are passed over, unparsed when the index allows. */
  wanted?: (line: number) => boolean;
  /** No line after this can be sent (the selection's lastLine): the runs stop there. */
  last?: number | undefined;
}

/** A run's next answer: kept parsed when there is one run, else found again by its place in the file. */
interface Entry {
  key: number;
  answer: Answer | undefined;
  offset: number;
  bytes: number;
  number: number;
}

export class OldResults implements OldAnswers {
  private readonly file: OldFile;
  private readonly heap = new ReadyHeap<RunReader>();
  private readonly wanted: (line: number) => boolean;
  private readonly last: number;
  private lastTaken = 0;

  constructor(path: string, name: string, index: ResultsIndex, options: OldResultsOptions = {}) {
    this.wanted = options.wanted ?? (() => true);
    this.last = options.last ?? Number.MAX_SAFE_INTEGER;
    const { runs } = index;
    // One run (a results file, a recording) reads as a plain stream; with many, each reads less at a time.
    const chunk = Math.max(4096, Math.min(READ_CHUNK_BYTES, Math.floor((4 * READ_CHUNK_BYTES) / runs.length)));
    this.file = new OldFile(path, name, chunk, index.quickKeys);
    try {
      runs.forEach((start, i) => {
        const end = i + 1 < runs.length ? (runs[i + 1] as SplitStart).offset : index.end;
        this.enqueue(new RunReader(this.file, i, start, end, { keep: runs.length === 1, wanted: this.wanted, last: this.last }));
      });
    } catch (error) {
      this.file.close();
      throw error;
    }
  }

  take(line: number, passed: (old: Answer) => void): Answer | undefined {
    if (line <= this.lastTaken) throw new RangeError(`line ${line} taken after line ${this.lastTaken}: lines must ascend`);
    this.lastTaken = line;
    for (let key = this.heap.firstSeq; key !== undefined && key <= line; key = this.heap.firstSeq) {
      const entry = this.shift();
      if (key === line) return this.file.answerOf(entry);
      if (this.wanted(key)) passed(this.file.answerOf(entry));
    }
    return undefined;
  }

  rest(passed: (old: Answer) => void, budget = Infinity): boolean {
    for (let n = 0; n < budget; n++) {
      const key = this.heap.firstSeq;
      if (key === undefined) return false;
      const entry = this.shift();
      if (this.wanted(key)) passed(this.file.answerOf(entry));
    }
    return this.heap.length > 0;
  }

  close(): void {
    this.file.close();
  }

  /** The lowest line's entry; of several runs holding that line, the latest run's (the others are dropped). */
  private shift(): Entry {
    const first = this.heap.shift() as RunReader;
    const key = (first.entry as Entry).key;
    let winner = first;
    const done = [first];
    while (this.heap.firstSeq === key) {
      const other = this.heap.shift() as RunReader;
      done.push(other);
      if (other.index > winner.index) winner = other;
    }
    const entry = winner.entry as Entry;
    for (const run of done) {
      run.advance();
      this.enqueue(run);
    }
    return entry;
  }

  private enqueue(run: RunReader): void {
    if (run.entry !== undefined) this.heap.push(run.entry.key, run);
  }
}

/** One run of the file, from its first byte to the next run's, an answer at a time. */
class RunReader {
  entry: Entry | undefined;
  private readonly splitter: LineSplitter;
  private position: number;
  private lines: (Line | undefined)[] = [];
  private next = 0;
  private ended = false;

  constructor(
    private readonly file: OldFile,
    readonly index: number,
    start: SplitStart,
    private readonly end: number,
    private readonly options: { keep: boolean; wanted: (line: number) => boolean; last: number },
  ) {
    // The first run starts at the file's first byte, where a BOM may be.
    this.splitter = new LineSplitter({ offsets: true, start: start.offset > 0 ? start : undefined });
    this.position = start.offset;
    this.advance();
  }

  /** Moves to the run's next answer; undefined past its end or past the last line wanted. */
  advance(): void {
    const previous = this.entry?.key ?? 0;
    this.entry = undefined;
    for (let line = this.nextLine(); line !== undefined; line = this.nextLine()) {
      const quick = this.file.quickKeys ? quickKey(line.text) : undefined;
      // Parsed only to find its line, or to keep it (one run); a line this run cannot send is never parsed.
      const answer = quick !== undefined && (!this.options.keep || !this.options.wanted(quick)) ? undefined : this.file.parse(line);
      const key = quick ?? answer?.line;
      if (key === undefined) continue;
      if (key <= previous) throw this.file.changed(line.number);
      if (key > this.options.last) return;
      this.entry = {
        key,
        answer: this.options.keep ? answer : undefined,
        offset: line.offset as number,
        bytes: Buffer.byteLength(line.text),
        number: line.number,
      };
      return;
    }
  }

  private nextLine(): Extract<Line, { text: string }> | undefined {
    for (;;) {
      if (this.next < this.lines.length) {
        const line = this.lines[this.next] as Line;
        // Let go of it now: a long line would otherwise stay until the next read.
        this.lines[this.next++] = undefined;
        if ("error" in line) throw this.file.changed(line.number);
        return line;
      }
      if (this.ended) return undefined;
      this.lines = this.read();
      this.next = 0;
    }
  }

  private read(): Line[] {
    if (this.position >= this.end) {
      this.ended = true;
      return this.splitter.end();
    }
    const bytes = this.file.read(this.position, this.end - this.position);
    this.position += bytes.length;
    return this.splitter.push(bytes);
  }
}

/** The open file, its one read buffer (the splitter copies what it keeps), and how a line becomes an answer. */
class OldFile {
  private fd: number | undefined;
  private readonly buffer: Buffer;

  constructor(
    path: string,
    private readonly name: string,
    chunk: number,
    readonly quickKeys: boolean,
  ) {
    this.fd = openSync(path, "r");
    this.buffer = Buffer.allocUnsafe(chunk);
  }

  read(position: number, most: number): Buffer {
    const length = Math.min(most, this.buffer.length);
    const bytesRead = readSync(this.fd as number, this.buffer, 0, length, position);
    // Shorter than when it was scanned: the file changed under the run.
    if (bytesRead === 0) throw this.changed(undefined);
    return this.buffer.subarray(0, bytesRead);
  }

  /** The line's answer, or undefined for a line that carries none. */
  parse(line: { number: number; text: string }): Answer | undefined {
    const answer = parseAnswerLine(line.text, line.number);
    if (typeof answer === "string") throw this.changed(line.number);
    return answer;
  }

  /** The entry's answer, read again from the file when it was not kept. */
  answerOf(entry: Entry): Answer {
    if (entry.answer !== undefined) return entry.answer;
    const bytes = Buffer.allocUnsafe(entry.bytes);
    const bytesRead = readSync(this.fd as number, bytes, 0, entry.bytes, entry.offset);
    const answer = bytesRead === entry.bytes ? this.parse({ number: entry.number, text: bytes.toString("utf8") }) : undefined;
    if (answer?.line !== entry.key) throw this.changed(entry.number);
    return answer;
  }

  changed(line: number | undefined): InputError {
    return new InputError("changed since it was checked before sending (is something writing to it?)", {
      file: this.name,
      ...(line !== undefined ? { line } : {}),
    });
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
