/**
 * Webhooks (Actions) batches (docs/actions.md#batches), as pure logic on times given by the
 * caller: every item goes to every group (one group per webhook), in arrival order; a group's
 * batch is handed out when it holds its size, or once its first item has waited `waitMs` (when
 * given), or when the caller flushes (the source ended). A group of size 1 hands each item out at once.
 */

/** One batch handed out: its group (the webhook's index) and its items, in arrival order. */
export interface Batch<T> {
  group: number;
  items: T[];
}

export class Batcher<T> {
  private readonly open: T[][];
  private readonly openedAt: number[];

  /** `sizes`: each group's batch size (1 = no batching). Without `waitMs`, only size and flush hand batches out. */
  constructor(
    private readonly sizes: readonly number[],
    private readonly waitMs?: number,
  ) {
    this.open = sizes.map(() => []);
    this.openedAt = sizes.map(() => 0);
  }

  /** Adds an item to every group; the batches it filled, in group order. */
  add(item: T, now: number): Batch<T>[] {
    const full: Batch<T>[] = [];
    for (const [group, size] of this.sizes.entries()) {
      const batch = this.open[group] as T[];
      if (batch.length === 0) this.openedAt[group] = now;
      batch.push(item);
      if (batch.length >= size) full.push(this.take(group));
    }
    return full;
  }

  /** The batches whose first item has waited `waitMs` by `now`. */
  due(now: number): Batch<T>[] {
    const due: Batch<T>[] = [];
    const { waitMs } = this;
    if (waitMs === undefined) return due;
    for (const group of this.sizes.keys()) {
      if ((this.open[group] as T[]).length > 0 && now - (this.openedAt[group] as number) >= waitMs) due.push(this.take(group));
    }
    return due;
  }

  /** When the next open batch falls due, or undefined when none is open. */
  nextDueAt(): number | undefined {
    let at: number | undefined;
    const { waitMs } = this;
    if (waitMs === undefined) return at;
    for (const group of this.sizes.keys()) {
      if ((this.open[group] as T[]).length === 0) continue;
      const due = (this.openedAt[group] as number) + waitMs;
      if (at === undefined || due < at) at = due;
    }
    return at;
  }

  /** Every open batch, in group order. */
  flush(): Batch<T>[] {
    const rest: Batch<T>[] = [];
    for (const group of this.sizes.keys()) if ((this.open[group] as T[]).length > 0) rest.push(this.take(group));
    return rest;
  }

  /** Items in open batches, counted once per group. */
  get held(): number {
    let held = 0;
    for (const batch of this.open) held += batch.length;
    return held;
  }

  private take(group: number): Batch<T> {
    const items = this.open[group] as T[];
    this.open[group] = [];
    return { group, items };
  }
}
