import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../errors.js";
import type BetterSqlite3 from "better-sqlite3";
import { keepForProcessLifetime, statementOf } from "./sqlite-lifetime.js";

/**
 * The queue of accepted messages between ingest and delivery. `enqueue`
 * returns only once the messages would survive a crash of the process, so the
 * 2xx can follow it. Rows leave `pending` when delivered, or move to `failed`
 * when given up. Deliveries are acknowledged in batches (one transaction per
 * tick): a crash can lose at most the acks of that tick, whose messages are
 * then resent (at least once).
 */

export interface NewMessage {
  /** The outgoing JSON body, exactly as it will be signed and sent. */
  body: string;
  source: string;
}

/** A user a source has sent calls about (for deletion requests). */
export interface SeenUser {
  source: string;
  userId: string;
}

export interface QueuedMessage {
  id: number;
  body: string;
  /** Epoch ms of the first delivery attempt, when one was recorded (before a restart). */
  firstAttemptAt: number | undefined;
}

import type { Failure } from "../delivery/failure.js";

export type { Failure };

export interface FailedMessage {
  id: number;
  body: string;
  failedAt: number;
  failure: Failure;
}

export interface MessageQueue {
  /** Stores the messages of one request, and the users it mentions, in one transaction. */
  enqueue(messages: readonly NewMessage[], seen?: readonly SeenUser[]): void;
  /** Up to `limit` pending messages not handed out before by this queue object, oldest first. */
  claim(limit: number): QueuedMessage[];
  /** Records when delivery of each message started, so the retry window survives a restart. */
  recordFirstAttempts(starts: ReadonlyMap<number, number>): void;
  delivered(id: number): void;
  failed(id: number, failure: Failure): void;
  /** Messages stored and not yet delivered or given up. */
  pendingCount(): number;
  failedCount(): number;
  listFailed(limit?: number): FailedMessage[];
  /** Sources that have sent a message about `userId` (docs/serve-api.md#deletions). */
  sourcesThatSaw(userId: string): string[];
  /** Writes batched acknowledgements now. */
  flush(): void;
  close(): void;
}

const DATABASE_FILE = "serve.db";

/**
 * Opens (creating) the SQLite queue under `stateDir`; better-sqlite3 is loaded
 * only here. It holds every body and client address: a new directory is 0700
 * and a new database 0600. Any problem with the directory or the database
 * (a file, unreadable, read-only, corrupt, not a database) is one StateError.
 */
export async function openSqliteQueue(stateDir: string, options: { onStorageError?: (error: Error) => void } = {}): Promise<MessageQueue> {
  const Database = await loadBetterSqlite3();
  const dir = resolve(stateDir);
  const file = join(dir, DATABASE_FILE);
  let db: BetterSqlite3.Database | undefined;
  try {
    makeStateDirectory(dir);
    if (existsSync(file) && !statSync(file).isFile()) throw new Error(`${file} is not a regular file`);
    // Created here so its mode (and that of the -wal and -shm files SQLite derives from it) is 0600.
    closeSync(openSync(file, "a", 0o600));
    db = keepForProcessLifetime(withSqliteNeeded(() => new Database(file)));
    return new SqliteQueue(db, options.onStorageError);
  } catch (error) {
    db?.close();
    if (error instanceof UsageError) throw error;
    throw new StateError(`cannot use the state directory: ${stateProblem(error)}`, { field: "state", file: dir });
  }
}

const SQLITE_NEEDED = "the durable queue needs better-sqlite3, an optional dependency";

/** better-sqlite3 is optional: without it (or built for another Node.js) say how to get it. */
async function loadBetterSqlite3(): Promise<typeof BetterSqlite3> {
  try {
    return (await import("better-sqlite3")).default;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") {
      throw new UsageError(`${SQLITE_NEEDED} that is not installed: run 'npm install better-sqlite3'`);
    }
    throw error;
  }
}

// The native addon loads on the first `new Database`: a build for another Node.js fails there.
function withSqliteNeeded<T>(open: () => T): T {
  try {
    return open();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_DLOPEN_FAILED" || /NODE_MODULE_VERSION|bindings file/.test((error as Error).message)) {
      throw new UsageError(`${SQLITE_NEEDED} that cannot be loaded on this Node.js: run 'npm rebuild better-sqlite3'`);
    }
    throw error;
  }
}

/** mkdir -p, one level at a time: Node's recursive mkdir loops for ever on some paths (/proc/…). */
function makeStateDirectory(dir: string): void {
  const missing: string[] = [];
  let path = dir;
  while (!existsSync(path)) {
    missing.unshift(path);
    const parent = dirname(path);
    if (parent === path) break;
    path = parent;
  }
  if (missing.length === 0 && !statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
  for (const level of missing) mkdirSync(level, { mode: 0o700 });
}

function stateProblem(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case "SQLITE_NOTADB":
    case "SQLITE_CORRUPT":
      return `${DATABASE_FILE} is damaged or not a SQLite database (${message}); move it away to start empty`;
    case "SQLITE_READONLY":
    case "EACCES":
    case "EROFS":
    case "EPERM":
      return `not writable (${message})`;
    default:
      return message;
  }
}

/** The durable queue's tables: pending messages, the ones given up, and who has sent about which user. */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    body TEXT NOT NULL,
    source TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    first_attempt_at INTEGER
  );
  CREATE TABLE IF NOT EXISTS failed (
    id INTEGER PRIMARY KEY,
    body TEXT NOT NULL,
    source TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    reason TEXT NOT NULL,
    status INTEGER,
    attempts INTEGER NOT NULL,
    failed_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS seen_users (
    user_id TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (user_id, source)
  ) WITHOUT ROWID;
`;

/** The state directory or its database cannot be used: a usage problem (exit 2), never a crash. */
export class StateError extends UsageError {}

// After a failed background write (disk full), try again this much later.
const STORAGE_RETRY_MS = 1_000;

// Remembering seen (source, user) pairs spares an INSERT per message; bounded so memory stays flat.
const SEEN_CACHE_LIMIT = 100_000;

class SqliteQueue implements MessageQueue {
  private readonly db: BetterSqlite3.Database;
  private readonly insertTransaction: (messages: readonly NewMessage[], seen: readonly SeenUser[]) => void;
  private readonly ackTransaction: () => void;
  private readonly statements: {
    insert: BetterSqlite3.Statement<[string, string, number]>;
    seen: BetterSqlite3.Statement<[string, string]>;
    claim: BetterSqlite3.Statement<[number, number], { id: number; body: string; first_attempt_at: number | null }>;
    firstAttempt: BetterSqlite3.Statement<[number, number]>;
    remove: BetterSqlite3.Statement<[number]>;
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

  constructor(
    db: BetterSqlite3.Database,
    private readonly onStorageError: (error: Error) => void = () => {},
  ) {
    this.db = db;
    // exec, not db.pragma(), which prepares a statement that would become garbage (sqlite-lifetime.ts).
    // In WAL mode NORMAL still survives a killed process; only an OS crash can drop the last commits.
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
    db.exec(SCHEMA);
    this.statements = {
      insert: statementOf(db, "INSERT INTO pending (body, source, accepted_at) VALUES (?, ?, ?)"),
      seen: statementOf(db, "INSERT OR IGNORE INTO seen_users (user_id, source) VALUES (?, ?)"),
      claim: statementOf(db, "SELECT id, body, first_attempt_at FROM pending WHERE id > ? ORDER BY id LIMIT ?"),
      firstAttempt: statementOf(db, "UPDATE pending SET first_attempt_at = ? WHERE id = ? AND first_attempt_at IS NULL"),
      remove: statementOf(db, "DELETE FROM pending WHERE id = ?"),
    };
    this.pending = (statementOf(db, "SELECT COUNT(*) AS n FROM pending").get() as { n: number }).n;
    this.failedTotal = (statementOf(db, "SELECT COUNT(*) AS n FROM failed").get() as { n: number }).n;

    this.insertTransaction = db.transaction((messages: readonly NewMessage[], seen: readonly SeenUser[]) => {
      const now = Date.now();
      for (const message of messages) this.statements.insert.run(message.body, message.source, now);
      for (const user of seen) this.rememberSeen(user.source, user.userId);
    });
    const failStatement = statementOf<[string, number | null, number, number, number]>(
      db,
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
    const rows = statementOf(this.db, "SELECT id, body, reason, status, attempts, failed_at FROM failed ORDER BY id LIMIT ?")
      .all(limit) as { id: number; body: string; reason: string; status: number | null; attempts: number; failed_at: number }[];
    return rows.map((row) => ({
      id: row.id,
      body: row.body,
      failedAt: row.failed_at,
      failure: { reason: row.reason, status: row.status, attempts: row.attempts },
    }));
  }

  sourcesThatSaw(userId: string): string[] {
    const rows = statementOf(this.db, "SELECT source FROM seen_users WHERE user_id = ? ORDER BY source").all(userId) as { source: string }[];
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
