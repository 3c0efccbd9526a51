import { closeSync, openSync, writeSync } from "node:fs";
import { UsageError } from "../errors.js";
import { sameFile } from "../util/same-file.js";

/**
 * The `--dead-letter FILE` adapter: appends one line per message that was not
 * delivered. Appending (never truncating) keeps earlier failures; each line is
 * written synchronously so an interrupted replay has already recorded it.
 */
export class DeadLetterFile {
  private fd: number | undefined;

  constructor(readonly path: string, inputPath: string | undefined) {
    if (inputPath !== undefined && sameFile(path, inputPath)) {
      throw new UsageError("the dead-letter file cannot be the input file (its lines would be read again)", { field: "deadLetter", file: path });
    }
    try {
      this.fd = openSync(path, "a");
    } catch (error) {
      throw new UsageError(`cannot open for appending: ${(error as Error).message}`, { field: "deadLetter", file: path });
    }
  }

  write(line: string): void {
    if (this.fd === undefined) throw new Error("dead-letter file is closed");
    writeSync(this.fd, `${line}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
