/**
 * The low-water resume line (docs/recording.md#resume): the lowest line that is
 * neither delivered nor recorded as finally failed (dead-lettered). Messages
 * in flight, waiting to retry or queued when the run stopped are never done:
 * they are not recorded anywhere, so they are at or after the mark. Only the
 * lowest undone line is kept, with its position in the source: every message
 * before it was done, which gives the count of later lines already delivered.
 */
export class ResumeMark {
  private lowest: { line: number; index: number; delivered: boolean } | undefined;
  /** Positions of recorded failures (only with a record): to tell delivered from recorded below the mark. */
  private readonly recorded: number[] = [];

  /** `recordsFailed`: a message that finally failed is recorded (dead-lettered), so it is done. */
  constructor(private readonly recordsFailed: boolean) {}

  /**
   * A message finished, was interrupted, or was dropped unstarted; `index` is its 0-based
   * position in the source. `failed`: given up for good (not interrupted). `delivered` with
   * `interrupted`: delivered, but its reporter failed (its result unwritten), so not done.
   */
  finished(line: number, index: number, outcome: "delivered" | "failed" | "interrupted", delivered = false): void {
    if (outcome === "delivered") return;
    if (outcome === "failed" && this.recordsFailed) {
      this.recorded.push(index);
      return;
    }
    if (this.lowest === undefined || line < this.lowest.line) this.lowest = { line, index, delivered };
  }

  /**
   * The resume line given the first line not read from the source (and its position), and
   * how many messages were delivered in all.
   */
  mark(next: { line: number; index: number }, delivered: number): { line: number; deliveredAfter: number } {
    const low = this.lowest !== undefined && this.lowest.line < next.line ? this.lowest : next;
    // Every message before `low` is done: delivered, or recorded as failed.
    const recordedBefore = this.recorded.filter((index) => index < low.index).length;
    // The resume line itself, when delivered, is not a later line.
    const itself = low === this.lowest && this.lowest.delivered ? 1 : 0;
    return { line: low.line, deliveredAfter: delivered - (low.index - recordedBefore) - itself };
  }
}
