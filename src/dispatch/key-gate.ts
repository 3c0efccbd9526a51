import { Queue } from "./heap.js";

/** An item waiting behind its key, with its admission number (its place in source order). */
export interface Waiting<T> {
  seq: number;
  item: T;
}

/** One item at a time per key: later items of a busy key wait here with their admission number. */
export class KeyGate<T> {
  // null: busy with none waiting (most keys, most of the time), so no queue is made for them.
  private readonly busy = new Map<string, Queue<Waiting<T>> | null>();
  blocked = 0;

  /** True when the item may be ready now; false when it waits behind its key. */
  enter(key: string, seq: number, item: T): boolean {
    let queue = this.busy.get(key);
    if (queue === undefined) {
      this.busy.set(key, null);
      return true;
    }
    if (queue === null) {
      queue = new Queue();
      this.busy.set(key, queue);
    }
    queue.push({ seq, item });
    this.blocked += 1;
    return false;
  }

  /** The key's item finished: its next waiting item, or undefined (the key is free). */
  leave(key: string): Waiting<T> | undefined {
    const next = this.busy.get(key)?.shift();
    if (next === undefined) this.busy.delete(key);
    else this.blocked -= 1;
    return next;
  }

  drain(): T[] {
    const rest: T[] = [];
    for (const queue of this.busy.values()) for (const waiting of queue?.drain() ?? []) rest.push(waiting.item);
    this.busy.clear();
    this.blocked = 0;
    return rest;
  }
}
