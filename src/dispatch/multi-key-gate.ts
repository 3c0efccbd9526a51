import { Queue } from "./heap.js";

/** An item with its admission number and how many of its keys an earlier item still holds. */
interface Held<T> {
  seq: number;
  item: T;
  blockedOn: number;
}

/**
 * Order for items that hold several keys at once (a Webhooks (Actions) batch holds each of its
 * users): an item runs only once every earlier item sharing a key with it has finished. Each key
 * keeps its items in admission order; an item is ready when it heads the queue of every key it has.
 */
export class MultiKeyGate<T> {
  private readonly queues = new Map<string, Queue<Held<T>>>();
  private readonly holding = new Map<T, Held<T>>();
  /** Items waiting behind an earlier one. */
  blocked = 0;

  /** True when the item may be ready now; false when it waits behind an earlier item of one of its keys. */
  enter(keys: readonly string[], seq: number, item: T): boolean {
    const held: Held<T> = { seq, item, blockedOn: 0 };
    for (const key of keys) {
      let queue = this.queues.get(key);
      if (queue === undefined) {
        queue = new Queue();
        this.queues.set(key, queue);
      } else if (queue.length > 0) held.blockedOn += 1;
      queue.push(held);
    }
    this.holding.set(item, held);
    if (held.blockedOn > 0) this.blocked += 1;
    return held.blockedOn === 0;
  }

  /** The item finished: the items it was the last to hold back, with their admission numbers. */
  leave(keys: readonly string[], item: T): { seq: number; item: T }[] {
    const held = this.holding.get(item);
    this.holding.delete(item);
    const released: { seq: number; item: T }[] = [];
    if (held === undefined) return released;
    for (const key of keys) {
      const queue = this.queues.get(key);
      if (queue === undefined) continue;
      // Every item of a key started in admission order, so the one finishing heads its queue.
      queue.shift();
      const next = queue.peek();
      if (next === undefined) {
        this.queues.delete(key);
        continue;
      }
      next.blockedOn -= 1;
      if (next.blockedOn === 0) {
        this.blocked -= 1;
        released.push({ seq: next.seq, item: next.item });
      }
    }
    return released;
  }

  /** The items still waiting (the run stopped), each once. */
  drain(): T[] {
    const rest = [...this.holding.values()].filter((held) => held.blockedOn > 0).map((held) => held.item);
    this.queues.clear();
    this.holding.clear();
    this.blocked = 0;
    return rest;
  }
}
