/**
 * Releases per-line results in input order although messages finish in any
 * order (concurrency, retries). Pure: the caller writes what `release` hands back.
 *
 * Protocol: `admit(line)` when a message is handed to the sender (in input
 * order), then exactly one of `finish(line, value)` (it has a result) or
 * `drop(line)` (interrupted or never started: no result line). Each call
 * returns the values that are now next in order.
 *
 * Memory: a finished value waits only for lower admitted lines still in
 * flight. That is at most the lines admitted after the oldest unfinished one;
 * a message retrying for hours (the 4 h window) would hold every later result,
 * so `held` is exposed for the sender to stop admitting past a limit
 * (`isFull`), which bounds memory at about `limit` results (each under 64 KiB of body).
 */
export class ResultsOrder<T> {
  /** Admitted lines not yet released, in admission (= input) order. */
  private readonly queue: number[] = [];
  private head = 0;
  /** Finished, waiting for lower lines: line → value, or null for a dropped line. */
  private readonly done = new Map<number, T | null>();
  private lastAdmitted = 0;

  constructor(private readonly limit = 4096) {}

  admit(line: number): void {
    if (!(line > this.lastAdmitted)) throw new RangeError(`line ${line} admitted after line ${this.lastAdmitted}: admission must follow input order`);
    this.lastAdmitted = line;
    this.queue.push(line);
  }

  finish(line: number, value: T): T[] {
    this.settle(line, value);
    return this.release();
  }

  drop(line: number): T[] {
    this.settle(line, null);
    return this.release();
  }

  /** Finished results waiting for a lower line. */
  get held(): number {
    return this.done.size;
  }

  /** Admitted and not yet released (in flight or held). */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** The sender should wait before admitting more. */
  get isFull(): boolean {
    return this.done.size >= this.limit;
  }

  private settle(line: number, value: T | null): void {
    if (this.done.has(line) || !this.isPending(line)) throw new RangeError(`line ${line} is not in flight`);
    this.done.set(line, value);
  }

  private isPending(line: number): boolean {
    // Admitted lines ascend, so a binary search finds it.
    let low = this.head;
    let high = this.queue.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = this.queue[mid] as number;
      if (at === line) return true;
      if (at < line) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  }

  private release(): T[] {
    const out: T[] = [];
    while (this.head < this.queue.length) {
      const line = this.queue[this.head] as number;
      if (!this.done.has(line)) break;
      const value = this.done.get(line) as T | null;
      this.done.delete(line);
      this.head += 1;
      if (value !== null) out.push(value);
    }
    // Compact now and then so the queue's memory follows the lines in flight, not the file.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    return out;
  }
}
