/** Where recording lines go: one call per batch, all or nothing. */
export interface RecordingSink {
  append(lines: string): void;
}

/**
 * Groups the recording lines of requests completed in the same event-loop
 * turn into one write that precedes all their answers. Each request's
 * `then` learns whether its line was written (a full disk: not).
 */
export class RecordBatcher {
  private lines = "";
  private waiting: ((written: Error | null) => void)[] = [];

  constructor(private readonly sink: RecordingSink) {}

  add(line: string, then: (failure: Error | null) => void): void {
    this.lines += line;
    this.waiting.push(then);
    if (this.waiting.length === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const lines = this.lines;
    const waiting = this.waiting;
    this.lines = "";
    this.waiting = [];
    let failure: Error | null = null;
    try {
      this.sink.append(lines);
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
    }
    for (const then of waiting) then(failure);
  }
}
