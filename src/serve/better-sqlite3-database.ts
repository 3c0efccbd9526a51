import type BetterSqlite3 from "better-sqlite3";
import type { SqlDatabase, SqlStatement } from "./sql-database.js";
import { keepForProcessLifetime, statementOf } from "./sqlite-lifetime.js";

/** A better-sqlite3 database as the queue uses it; every native object kept for the process's lifetime (sqlite-lifetime.ts). */
export function betterSqlite3Database(Database: typeof BetterSqlite3, file: string): SqlDatabase {
  const db = keepForProcessLifetime(new Database(file));
  return {
    driver: "better-sqlite3",
    // exec, not db.pragma(), which prepares a statement that would become garbage.
    exec: (sql) => {
      db.exec(sql);
    },
    statement: <Params extends unknown[], Row>(sql: string) => statementOf<Params, Row>(db, sql) as unknown as SqlStatement<Params, Row>,
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
  };
}
