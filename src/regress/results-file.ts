import { UsageError } from "../errors.js";
import { AppendFile } from "../util/append-file.js";
import { sameFile } from "../util/same-file.js";
import { readLineBatches } from "../util/ndjson.js";
import { ResultsScan, type ResultsIndex } from "./results-read.js";
import { formatResultLine, type ResultLine } from "./results.js";

/**
 * The `--results FILE` sink. Appends (like --dead-letter), so a run resumed
 * with --from-line continues the same file; the reader keeps the last line
 * for a number. Lines come from a ResultsOrder (input order); each batch is
 * one synchronous write, so after Ctrl-C the file holds every line released.
 */
export class ResultsFile {
  private readonly file: AppendFile;

  /** `input`, the file replayed, may not be the results file (the --compare file is the command's to check). */
  constructor(
    readonly path: string,
    others: { input?: string | undefined } = {},
    field = "results",
  ) {
    if (others.input !== undefined && sameFile(path, others.input)) throw new UsageError("the results file cannot be the input file", { field, file: path });
    this.file = new AppendFile(path, field);
  }

  /** Whole lines or none; throws an error naming the file when they cannot be written. */
  write(lines: readonly ResultLine[]): void {
    if (lines.length === 0) return;
    this.file.appendOrExplain(lines.map(formatResultLine).join(""));
  }

  close(): void {
    this.file.close();
  }
}

/**
 * Checks a results file, several concatenated, or a recording with responses
 * (see ResultsScan), keeping none of its answers. Interrupted, it returns
 * undefined rather than judge part of the file.
 */
export async function scanResults(path: string, name: string, options: { signal?: AbortSignal } = {}): Promise<ResultsIndex | undefined> {
  const scan = new ResultsScan(name);
  for await (const batch of readLineBatches(path, { ...options, offsets: true })) {
    for (const line of batch) scan.add(line);
  }
  return options.signal?.aborted ? undefined : scan.result();
}
