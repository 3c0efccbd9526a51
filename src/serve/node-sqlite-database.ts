import type { SqlDatabase, SqlStatement } from "./sql-database.js";

/** What the queue uses of `node:sqlite` (@types/node 20 has no declarations for it). */
export interface NodeSqliteModule {
  DatabaseSync: new (file: string) => NodeSqliteDatabase;
}

interface NodeSqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): SqlStatement;
  close(): void;
}

/** A `node:sqlite` database as the queue uses it: statements prepared once per SQL text, transactions by hand. */
export function nodeSqliteDatabase(sqlite: NodeSqliteModule, file: string): SqlDatabase {
  const db = new sqlite.DatabaseSync(file);
  const statements = new Map<string, SqlStatement>();
  const statement = <Params extends unknown[], Row>(sql: string): SqlStatement<Params, Row> => {
    let prepared = statements.get(sql);
    if (prepared === undefined) {
      prepared = db.prepare(sql);
      statements.set(sql, prepared);
    }
    return prepared as SqlStatement<Params, Row>;
  };
  return {
    driver: "node:sqlite",
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
