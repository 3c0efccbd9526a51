import { closeSync, openSync, writeSync } from "node:fs";
import { UsageError } from "../errors.js";
import { sameFile } from "../util/same-file.js";
import { readLineBatches } from "./ndjson.js";
import { ResultsReader, type ReadResults } from "./results-read.js";
import { formatResultLine, type ResultLine } from "./results.js";

/**
 * The `--results FILE` sink. Appends (like --dead-letter), so a run resumed
 * with --from-line continues the same file; the reader keeps the last line
 * for a number. Lines come from a ResultsOrder (input order); each batch is
 * one synchronous write, so after Ctrl-C the file holds every line released.
 */
export class ResultsFile {
  private fd: number | undefined;

  /** `input` and `compare` (the --compare file, read before the run) may not be the results file. */
  constructor(readonly path: string, others: { input?: string | undefined; compare?: string | undefined } = {}, field = "results") {
    for (const [role, other] of Object.entries(others)) {
      if (other !== undefined && sameFile(path, other)) {
        throw new UsageError(`the results file cannot be the ${role === "input" ? "input file" : "`compare` file"}`, { field, file: path });
      }
    }
    try {
      this.fd = openSync(path, "a");
    } catch (error) {
      throw new UsageError(`cannot open for appending: ${(error as Error).message}`, { field, file: path });
    }
  }

  write(lines: readonly ResultLine[]): void {
    if (lines.length === 0) return;
    if (this.fd === undefined) throw new Error("results file is closed");
    writeSync(this.fd, lines.map(formatResultLine).join(""));
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
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
