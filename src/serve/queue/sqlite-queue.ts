import type { Failure, FailedMessage, MessageQueue, NewMessage, QueuedMessage, SeenUser } from "./message-queue.js";
import { SCHEMA } from "./schema.js";
import { withSqliteCode, type SqlDatabase, type SqlStatement } from "./sqlite-database.js";

// After a failed background write (disk full), try again this much later.
const STORAGE_RETRY_MS = 1_000;

// Remembering seen (source, user) pairs spares an INSERT per message; bounded so memory stays flat.
const SEEN_CACHE_LIMIT = 100_000;

/** The durable queue: SQLite in WAL mode, writes acknowledged in batches (see message-queue.ts). Opened by durable-queue.ts. */
export class SqliteQueue implements MessageQueue {
  private readonly db: SqlDatabase;
  private readonly insertTransaction: (messages: readonly NewMessage[], seen: readonly SeenUser[]) => void;
  private readonly ackTransaction: () => void;
  private readonly statements: {
    insert: SqlStatement<[string, string, number]>;
    seen: SqlStatement<[string, string]>;
    claim: SqlStatement<[number, number], { id: number; body: string; first_attempt_at: number | null }>;
    firstAttempt: SqlStatement<[number, number]>;
    remove: SqlStatement<[number]>;
  };
  private cursor = 0;
  private pending: number;
  private failedTotal: number;
  private acks: number[] = [];
  private failures: { id: number; failure: Failure; at: number }[] = [];
  private ackScheduled = false;
  private readonly seenCache = new Set<string>();
  private closed = false;

  private retryTimer: NodeJS.Timeout | undefined;
  private readonly onStorageError: (error: Error) => void;

  constructor(db: SqlDatabase, onStorageError: (error: Error) => void = () => {}) {
    this.db = db;
    this.onStorageError = (error) => onStorageError(withSqliteCode(error));
    // In WAL mode NORMAL still survives a killed process; only an OS crash can drop the last commits.
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
    db.exec(SCHEMA);
    this.statements = {
      insert: db.statement("INSERT INTO pending (body, source, accepted_at) VALUES (?, ?, ?)"),
      seen: db.statement("INSERT OR IGNORE INTO seen_users (user_id, source) VALUES (?, ?)"),
      claim: db.statement("SELECT id, body, first_attempt_at FROM pending WHERE id > ? ORDER BY id LIMIT ?"),
      firstAttempt: db.statement("UPDATE pending SET first_attempt_at = ? WHERE id = ? AND first_attempt_at IS NULL"),
      remove: db.statement("DELETE FROM pending WHERE id = ?"),
    };
    this.pending = (db.statement("SELECT COUNT(*) AS n FROM pending").get() as { n: number }).n;
    this.failedTotal = (db.statement("SELECT COUNT(*) AS n FROM failed").get() as { n: number }).n;

    this.insertTransaction = db.transaction((messages: readonly NewMessage[], seen: readonly SeenUser[]) => {
      const now = Date.now();
      for (const message of messages) this.statements.insert.run(message.body, message.source, now);
      for (const user of seen) this.rememberSeen(user.source, user.userId);
    });
    const failStatement = db.statement<[string, number | null, number, number, number]>(
      "INSERT OR REPLACE INTO failed (id, body, source, accepted_at, reason, status, attempts, failed_at) " +
        "SELECT id, body, source, accepted_at, ?, ?, ?, ? FROM pending WHERE id = ?",
    );
    this.ackTransaction = db.transaction(() => {
      for (const { id, failure, at } of this.failures) failStatement.run(failure.reason, failure.status, failure.attempts, at, id);
      for (const { id } of this.failures) this.statements.remove.run(id);
      for (const id of this.acks) this.statements.remove.run(id);
    });
  }

  enqueue(messages: readonly NewMessage[], seen: readonly SeenUser[] = []): void {
    this.assertOpen();
    if (messages.length === 0 && seen.every((user) => this.seenCache.has(seenKey(user.source, user.userId)))) return;
    this.insertTransaction(messages, seen);
    this.pending += messages.length;
  }

  claim(limit: number): QueuedMessage[] {
    this.assertOpen();
    const rows = this.statements.claim.all(this.cursor, limit);
    const last = rows[rows.length - 1];
    if (last) this.cursor = last.id;
    return rows.map((row) => ({ id: row.id, body: row.body, firstAttemptAt: row.first_attempt_at ?? undefined }));
  }

  recordFirstAttempts(starts: ReadonlyMap<number, number>): void {
    if (this.closed || starts.size === 0) return;
    try {
      this.db.transaction(() => {
        for (const [id, at] of starts) this.statements.firstAttempt.run(at, id);
      })();
    } catch (error) {
      // Only the retry window's start is lost (it restarts after a restart): report, go on.
      this.onStorageError(error as Error);
    }
  }

  delivered(id: number): void {
    this.acks.push(id);
    this.pending -= 1;
    this.scheduleAck();
  }

  failed(id: number, failure: Failure): void {
    this.failures.push({ id, failure, at: Date.now() });
    this.pending -= 1;
    this.failedTotal += 1;
    this.scheduleAck();
  }

  pendingCount(): number {
    return this.pending;
  }

  failedCount(): number {
    return this.failedTotal;
  }

  listFailed(limit = 1_000_000): FailedMessage[] {
    this.flush();
    const rows = this.db.statement("SELECT id, body, reason, status, attempts, failed_at FROM failed ORDER BY id LIMIT ?").all(limit) as {
      id: number;
      body: string;
      reason: string;
      status: number | null;
      attempts: number;
      failed_at: number;
    }[];
    return rows.map((row) => ({
      id: row.id,
      body: row.body,
      failedAt: row.failed_at,
      failure: { reason: row.reason, status: row.status, attempts: row.attempts },
    }));
  }

  sourcesThatSaw(userId: string): string[] {
    const rows = this.db.statement("SELECT source FROM seen_users WHERE user_id = ? ORDER BY source").all(userId) as { source: string }[];
    return rows.map((row) => row.source);
  }

  /** Writes the batched acknowledgements; when that fails (disk full) they are kept and tried again later. */
  flush(): void {
    if (this.closed || (this.acks.length === 0 && this.failures.length === 0)) return;
    try {
      this.ackTransaction();
    } catch (error) {
      this.onStorageError(error as Error);
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = undefined;
        this.flush();
      }, STORAGE_RETRY_MS);
      return;
    }
    this.acks = [];
    this.failures = [];
  }

  close(): void {
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    // Acks that cannot be written now are lost, not the messages: they are sent again after a restart.
    this.flush();
    this.closed = true;
    this.db.close();
  }

  private rememberSeen(source: string, userId: string): void {
    const key = seenKey(source, userId);
    if (this.seenCache.has(key)) return;
    if (this.seenCache.size >= SEEN_CACHE_LIMIT) this.seenCache.clear();
    this.seenCache.add(key);
    this.statements.seen.run(userId, source);
  }

  private scheduleAck(): void {
    if (this.ackScheduled) return;
    this.ackScheduled = true;
    setImmediate(() => {
      this.ackScheduled = false;
      this.flush();
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("the queue is closed");
  }
}

function seenKey(source: string, userId: string): string {
  return `${source}\u0000${userId}`;
}
