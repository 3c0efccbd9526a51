/** The source read a batch at a time, with at most one read in flight (the scheduler peeks, then advances). */
export class SourceCursor<T> {
  private batch: readonly T[] = [];
  private index = 0;
  done = false;
  reading = false;

  constructor(
    private readonly source: AsyncIterator<readonly T[]>,
    private readonly onRead: () => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The next item, or undefined while the next batch is being read (or none is left). */
  peek(): T | undefined {
    if (this.index < this.batch.length) return this.batch[this.index];
    if (!this.done && !this.reading) this.read();
    return undefined;
  }

  advance(): void {
    this.index += 1;
  }

  get exhausted(): boolean {
    return this.done && this.index >= this.batch.length;
  }

  close(): void {
    if (!this.done) void this.source.return?.();
  }

  private read(): void {
    this.reading = true;
    this.source.next().then(
      (next) => {
        this.reading = false;
        if (next.done) this.done = true;
        else {
          this.batch = next.value;
          this.index = 0;
        }
        this.onRead();
      },
      (error: unknown) => {
        this.reading = false;
        this.done = true;
        this.onError(error);
      },
    );
  }
}
