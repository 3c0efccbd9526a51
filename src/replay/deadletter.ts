import { closeSync, openSync, realpathSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { UsageError } from "../errors.js";

/**
 * The `--dead-letter FILE` adapter: appends one line per message that was not
 * delivered. Appending (never truncating) keeps earlier failures; each line is
 * written synchronously so an interrupted replay has already recorded it.
 */
export class DeadLetterFile {
  private fd: number | undefined;
  private written = 0;

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
    this.written += 1;
  }

  /** Lines written by this replay. */
  get count(): number {
    return this.written;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
}
