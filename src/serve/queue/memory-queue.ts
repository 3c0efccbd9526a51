import type { Failure, FailedMessage, MessageQueue, NewMessage, QueuedMessage, SeenUser } from "./message-queue.js";

/** The same queue in memory: nothing survives the process (the durability benchmark's baseline). */
export class MemoryQueue implements MessageQueue {
  private nextId = 1;
  private readonly rows = new Map<number, { body: string; firstAttemptAt: number | undefined }>();
  private readonly failedRows: FailedMessage[] = [];
  private readonly seen = new Map<string, Set<string>>();
  private cursor = 0;

  enqueue(messages: readonly NewMessage[], seen: readonly SeenUser[] = []): void {
    for (const message of messages) this.rows.set(this.nextId++, { body: message.body, firstAttemptAt: undefined });
    for (const user of seen) {
      const sources = this.seen.get(user.userId) ?? new Set<string>();
      sources.add(user.source);
      this.seen.set(user.userId, sources);
    }
  }

  claim(limit: number): QueuedMessage[] {
    const claimed: QueuedMessage[] = [];
    // Map iteration is insertion (= id) order.
    for (const [id, row] of this.rows) {
      if (claimed.length >= limit) break;
      if (id <= this.cursor) continue;
      claimed.push({ id, body: row.body, firstAttemptAt: row.firstAttemptAt });
    }
    const last = claimed[claimed.length - 1];
    if (last) this.cursor = last.id;
    return claimed;
  }

  recordFirstAttempts(starts: ReadonlyMap<number, number>): void {
    for (const [id, at] of starts) {
      const row = this.rows.get(id);
      if (row && row.firstAttemptAt === undefined) row.firstAttemptAt = at;
    }
  }

  delivered(id: number): void {
    this.rows.delete(id);
  }

  failed(id: number, failure: Failure): void {
    const row = this.rows.get(id);
    if (!row) return;
    this.rows.delete(id);
    this.failedRows.push({ id, body: row.body, failedAt: Date.now(), failure });
  }

  pendingCount(): number {
    return this.rows.size;
  }

  failedCount(): number {
    return this.failedRows.length;
  }

  listFailed(limit = Number.MAX_SAFE_INTEGER): FailedMessage[] {
    return this.failedRows.slice(0, limit);
  }

  sourcesThatSaw(userId: string): string[] {
    return [...(this.seen.get(userId) ?? [])].sort();
  }

  flush(): void {}
  close(): void {}
}
