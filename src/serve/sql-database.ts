/**
 * The little of SQLite the durable queue uses, the same over both drivers:
 * Node's built-in `node:sqlite` (22.13+, nothing to compile) and the
 * better-sqlite3 addon (Node 20, when the user installed it). Opened by
 * sqlite-loader.ts.
 */

export type SqliteDriver = "node:sqlite" | "better-sqlite3";

export interface SqlStatement<Params extends unknown[] = unknown[], Row = unknown> {
  run(...params: Params): unknown;
  get(...params: Params): Row | undefined;
  all(...params: Params): Row[];
}

export interface SqlDatabase {
  readonly driver: SqliteDriver;
  exec(sql: string): void;
  /** The statement for `sql`, prepared on first use and kept as long as the database. */
  statement<Params extends unknown[] = unknown[], Row = unknown>(sql: string): SqlStatement<Params, Row>;
  /** `fn` wrapped in BEGIN … COMMIT (ROLLBACK when it throws). */
  transaction<Args extends unknown[]>(fn: (...args: Args) => void): (...args: Args) => void;
  close(): void;
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
 * The error with its SQLite code as better-sqlite3 names it (`SQLITE_FULL`…):
 * node:sqlite's errors say `ERR_SQLITE_ERROR` and keep the number in `errcode`.
 */
export function withSqliteCode<T>(error: T): T {
  const e = error as { code?: unknown; errcode?: unknown };
  if (e !== null && typeof e === "object" && e.code === "ERR_SQLITE_ERROR" && typeof e.errcode === "number") {
    const name = RESULT_CODES.get(e.errcode & 0xff);
    if (name !== undefined) e.code = name;
  }
  return error;
}
