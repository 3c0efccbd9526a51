import { closeSync, openSync, writeSync } from "node:fs";
import { UsageError } from "../errors.js";
import { sameFile } from "../util/same-file.js";
import { readLineBatches } from "./ndjson.js";
import { ResultsReader, type ReadResults } from "./results-read.js";
import { formatResultLine, type MessageOutcome } from "./results.js";
import { ResultsOrder } from "./results-order.js";

/**
 * The `--results FILE` sink. Appends (like --dead-letter), so a run resumed
 * with --from-line continues the same file; the reader keeps the last line
 * for a number. Each line is one synchronous write, so after Ctrl-C the file
 * holds every line released so far.
 */
export class ResultsFile {
  private fd: number | undefined;
  private readonly order: ResultsOrder<string>;

  constructor(readonly path: string, inputPath: string | undefined, options: { flag?: string; limit?: number } = {}) {
    const flag = options.flag ?? "--results";
    if (inputPath !== undefined && sameFile(path, inputPath)) {
      throw new UsageError("the results file cannot be the input file", { flag, file: path });
    }
    try {
      this.fd = openSync(path, "a");
    } catch (error) {
      throw new UsageError(`cannot open for appending: ${(error as Error).message}`, { flag, file: path });
    }
    this.order = new ResultsOrder<string>(options.limit);
  }

  /** A message was handed to the sender (call in input order). */
  admit(line: number): void {
    this.order.admit(line);
  }

  /** A message finished: its line is written once every lower admitted line is settled. */
  finish(outcome: MessageOutcome): void {
    this.write(this.order.finish(outcome.line, formatResultLine(outcome)));
  }

  /** An admitted message that will have no result (interrupted, never started). */
  drop(line: number): void {
    this.write(this.order.drop(line));
  }

  /** The sender should wait before admitting more (see ResultsOrder). */
  get isFull(): boolean {
    return this.order.isFull;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private write(lines: string[]): void {
    if (lines.length === 0) return;
    if (this.fd === undefined) throw new Error("results file is closed");
    writeSync(this.fd, lines.length === 1 ? (lines[0] as string) : lines.join(""));
  }
}

/** Reads a results file, several concatenated, or a recording with responses (see ResultsReader). */
export async function readResults(path: string, name: string, options: { signal?: AbortSignal } = {}): Promise<ReadResults> {
  const reader = new ResultsReader(name);
  for await (const batch of readLineBatches(path, options)) {
    for (const line of batch) reader.add(line);
  }
  return reader.result();
}
