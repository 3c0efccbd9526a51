/** The dispatcher's queues: plain FIFO and the ready heap ordered by admission number. */

/** A FIFO without Array#shift's O(n) copies. */
export class Queue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The first item, left in place. */
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  drain(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return rest;
  }
}

/**
 * Items ready to start, oldest (by admission) first: an item released by its
 * key's previous one goes before later items of other keys, so file order is
 * kept wherever the per-key rule allows (exactly, at concurrency 1). Parallel
 * arrays, so pushing and shifting allocate nothing per item.
 */
export class ReadyHeap<T> {
  private readonly seqs: number[] = [];
  private readonly items: T[] = [];

  get length(): number {
    return this.items.length;
  }

  /** The lowest admission number held, or undefined when empty. */
  get firstSeq(): number | undefined {
    return this.seqs[0];
  }

  push(seq: number, item: T): void {
    const seqs = this.seqs;
    const items = this.items;
    let i = items.length;
    seqs.push(seq);
    items.push(item);
    // Admitted items come in increasing order, so this usually stops at once.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const parentSeq = seqs[parent] as number;
      if (parentSeq <= seq) break;
      seqs[i] = parentSeq;
      items[i] = items[parent] as T;
      i = parent;
    }
    seqs[i] = seq;
    items[i] = item;
  }

  shift(): T | undefined {
    const seqs = this.seqs;
    const items = this.items;
    if (items.length === 0) return undefined;
    const top = items[0] as T;
    const lastSeq = seqs.pop() as number;
    const last = items.pop() as T;
    const n = items.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= n) break;
        const right = left + 1;
        const child = right < n && (seqs[right] as number) < (seqs[left] as number) ? right : left;
        const childSeq = seqs[child] as number;
        if (childSeq >= lastSeq) break;
        seqs[i] = childSeq;
        items[i] = items[child] as T;
        i = child;
      }
      seqs[i] = lastSeq;
      items[i] = last;
    }
    return top;
  }

  drain(): T[] {
    const rest: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) rest.push(item);
    return rest;
  }
}
