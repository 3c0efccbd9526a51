/**
 * The low-water resume line (CONTRACT.md 4 "Resume"): the lowest line that is
 * neither delivered nor recorded as not delivered. Messages in flight or
 * queued never count as done. Only the lowest undone line is kept, with its
 * position in the source: every message before it was done, which gives the
 * count of later lines already delivered without remembering them.
 */
export class ResumeMark {
  private lowest: { line: number; index: number } | undefined;

  /** `recordsNotDelivered`: a message not delivered is recorded (dead-lettered), so it is done. */
  constructor(private readonly recordsNotDelivered: boolean) {}

  /** A message finished (or was dropped unstarted); `index` is its 0-based position in the source. */
  finished(line: number, index: number, delivered: boolean): void {
    if (delivered || this.recordsNotDelivered) return;
    if (this.lowest === undefined || line < this.lowest.line) this.lowest = { line, index };
  }

  /**
   * The resume line given the first line not read from the source (and its position), and
   * how many messages were delivered in all.
   */
  mark(next: { line: number; index: number }, delivered: number): { line: number; deliveredAfter: number } {
    const low = this.lowest !== undefined && this.lowest.line < next.line ? this.lowest : next;
    // Every message before `low` is done; without a record of failures, done means delivered.
    const deliveredAfter = this.recordsNotDelivered ? 0 : delivered - low.index;
    return { line: low.line, deliveredAfter };
  }
}
