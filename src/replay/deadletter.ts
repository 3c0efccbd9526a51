import { UsageError } from "../errors.js";
import { AppendFile } from "../util/append-file.js";
import { sameFile } from "../util/same-file.js";

/**
 * The `--dead-letter FILE` adapter: appends one line per message that finally
 * failed. Appending (never truncating) keeps earlier failures; each line is
 * written synchronously, whole or not at all, so an interrupted replay has
 * already recorded it and a failed write (a full disk) leaves no partial line.
 */
export class DeadLetterFile {
  private readonly file: AppendFile;

  constructor(
    readonly path: string,
    inputPath: string | undefined,
  ) {
    if (inputPath !== undefined && sameFile(path, inputPath)) {
      throw new UsageError("the dead-letter file cannot be the input file (its lines would be read again)", { field: "deadLetter", file: path });
    }
    this.file = new AppendFile(path, "deadLetter");
  }

  /** Throws an error naming the file when the line cannot be written. */
  write(line: string): void {
    this.file.appendOrExplain(`${line}\n`);
  }

  close(): void {
    this.file.close();
  }
}
