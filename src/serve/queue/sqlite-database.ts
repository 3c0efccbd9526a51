import type { DatabaseSync } from "node:sqlite";
import { UsageError } from "../../errors.js";

/*
 * The durable queue's SQLite: Node's built-in node:sqlite (22.13 and later have it without a
 * flag; nothing to compile). Imported only when a queue is opened (loadSqlite), so the library
 * and the other commands never load it. The little of it the queue uses: statements prepared once
 * per SQL text and kept as long as the database, and transactions (node:sqlite has no helper).
 */

/** A prepared statement, typed by its parameters and its rows. */
export interface SqlStatement<Params extends unknown[] = unknown[], Row = unknown> {
  run(...params: Params): unknown;
  get(...params: Params): Row | undefined;
  all(...params: Params): Row[];
}

export interface SqlDatabase {
  exec(sql: string): void;
  /** The statement for `sql`, prepared on first use and kept as long as the database. */
  statement<Params extends unknown[] = unknown[], Row = unknown>(sql: string): SqlStatement<Params, Row>;
  /** `fn` wrapped in BEGIN … COMMIT (ROLLBACK when it throws). */
  transaction<Args extends unknown[]>(fn: (...args: Args) => void): (...args: Args) => void;
  close(): void;
}

/** Opens a database file (a failure there is the caller's StateError). */
export type SqlOpener = (file: string) => SqlDatabase;

type NodeSqlite = typeof import("node:sqlite");

/** node:sqlite, loaded; a UsageError where this Node.js was started without it. */
export async function loadSqlite(): Promise<SqlOpener> {
  const sqlite = await importNodeSqlite();
  return (file) => sqliteDatabase(new sqlite.DatabaseSync(file));
}

async function importNodeSqlite(): Promise<NodeSqlite> {
  // Only the SQLite ExperimentalWarning is kept quiet (22.13+ print one; 24.21 does not), and only while it loads.
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : warning.message;
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const name = typeof warning === "string" ? type : warning.name;
    if ((name === "ExperimentalWarning" || type === "ExperimentalWarning") && /SQLite/i.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return await import("node:sqlite");
  } catch (error) {
    // Only `node --no-experimental-sqlite` (or NODE_OPTIONS) turns it off on 22.13 and later.
    if ((error as NodeJS.ErrnoException).code === "ERR_UNKNOWN_BUILTIN_MODULE") {
      throw new UsageError(
        `the durable queue needs node:sqlite, which this Node.js (${process.version}) was started without (--no-experimental-sqlite); ` +
          "--memory keeps the queue in memory instead (nothing survives a restart)",
      );
    }
    throw error;
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** A database as the queue uses it: statements prepared once per SQL text, transactions by hand. */
function sqliteDatabase(db: DatabaseSync): SqlDatabase {
  const statements = new Map<string, SqlStatement>();
  const statement = <Params extends unknown[], Row>(sql: string): SqlStatement<Params, Row> => {
    let prepared = statements.get(sql);
    if (prepared === undefined) {
      prepared = db.prepare(sql) as unknown as SqlStatement;
      statements.set(sql, prepared);
    }
    return prepared as SqlStatement<Params, Row>;
  };
  return {
    exec: (sql) => db.exec(sql),
    statement,
    transaction:
      (fn) =>
      (...args) => {
        statement("BEGIN").run();
        try {
          fn(...args);
          statement("COMMIT").run();
        } catch (error) {
          // A COMMIT that failed (disk full) may leave the transaction open, or SQLite may have ended it already.
          try {
            statement("ROLLBACK").run();
          } catch {}
          throw error;
        }
      },
    close: () => {
      statements.clear();
      db.close();
    },
  };
}

/** Primary result codes by number (sqlite3.h), for the few a caller tells apart. */
const RESULT_CODES: ReadonlyMap<number, string> = new Map([
  [8, "SQLITE_READONLY"],
  [10, "SQLITE_IOERR"],
  [11, "SQLITE_CORRUPT"],
  [13, "SQLITE_FULL"],
  [14, "SQLITE_CANTOPEN"],
  [26, "SQLITE_NOTADB"],
]);

/**
 * The error with its SQLite code by name (`SQLITE_FULL`…) in `code`: node:sqlite's errors say
 * `ERR_SQLITE_ERROR` there and keep the number in `errcode`.
 */
export function withSqliteCode<T>(error: T): T {
  const e = error as { code?: unknown; errcode?: unknown };
  if (e !== null && typeof e === "object" && e.code === "ERR_SQLITE_ERROR" && typeof e.errcode === "number") {
    const name = RESULT_CODES.get(e.errcode & 0xff);
    if (name !== undefined) e.code = name;
  }
  return error;
}
