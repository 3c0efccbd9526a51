import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { UsageError, WriteError } from "../errors.js";

export type WriteFunction = (fd: number, buffer: Uint8Array, offset: number, length: number) => number;

/**
 * An append-only NDJSON file (listen's recording, replay's dead letters and
 * results): each append is one write(2), never fsync'd, and never leaves a
 * partial line, so a resumed run or a reader finds only whole lines.
 */
export class AppendFile {
  private fd: number | undefined;

  /** `field` names the flag in errors; `write` is injectable so tests can fail part way (a disk filling up). */
  constructor(
    readonly path: string,
    private readonly field: string,
    private readonly write: WriteFunction = writeSync,
  ) {
    try {
      this.fd = openSync(path, "a");
    } catch (error) {
      throw new UsageError(`cannot open for appending: ${(error as Error).message}`, { field, file: path });
    }
  }

  /** Writes all of `lines` or, on an error (ENOSPC), takes back what got written and throws the error as is. */
  append(lines: string): void {
    if (this.fd === undefined) return; // a late request after listen closed its recording
    const bytes = Buffer.from(lines, "utf8");
    let done = 0;
    try {
      // A short write (disk nearly full) leaves the rest to the loop.
      while (done < bytes.length) done += this.write(this.fd, bytes, done, bytes.length - done);
    } catch (error) {
      if (done > 0) this.takeBack(done);
      throw error;
    }
  }

  /** Like `append`, but a failure is an error naming the file and its flag (exit 1, no stack). */
  appendOrExplain(lines: string): void {
    try {
      this.append(lines);
    } catch (error) {
      throw new WriteError(`cannot write: ${(error as Error).message}`, { source: { field: this.field, file: this.path }, cause: error });
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private takeBack(bytes: number): void {
    try {
      const fd = this.fd as number;
      ftruncateSync(fd, fstatSync(fd).size - bytes);
    } catch {
      // Not a regular file (/dev/full): there is no line to take back.
    }
  }
}
