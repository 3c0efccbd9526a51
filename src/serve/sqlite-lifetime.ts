import type BetterSqlite3 from "better-sqlite3";

/*
 * On Node.js 24 an addon object (node::ObjectWrap) that V8 collects outside a JavaScript
 * context aborts the process ("Assertion failed: (env) != nullptr" in
 * RemoveEnvironmentCleanupHook), and better-sqlite3 12, the last release for Node.js 20,
 * builds its Database and Statement on ObjectWrap. So no better-sqlite3 object may ever
 * become garbage: each database is kept here until the process exits (Node's own cleanup
 * then frees it safely), with its statements, each prepared once per SQL text so the set
 * stays bounded. The registry lives on globalThis so that a second copy of this module
 * (a test runner re-evaluating modules) cannot drop the first one's objects.
 */

type Statements = Map<string, BetterSqlite3.Statement>;

const REGISTRY = Symbol.for("webhook-cli.sqlite-objects");

function registry(): Map<BetterSqlite3.Database, Statements> {
  const holder = globalThis as { [REGISTRY]?: Map<BetterSqlite3.Database, Statements> };
  holder[REGISTRY] ??= new Map();
  return holder[REGISTRY];
}

/** Keeps `db` (and the statements `statementOf` prepares on it) reachable until the process exits. */
export function keepForProcessLifetime<T extends BetterSqlite3.Database>(db: T): T {
  if (!registry().has(db)) registry().set(db, new Map());
  return db;
}

/** The statement for `sql` on `db`, prepared on first use and kept as long as `db`. */
export function statementOf<Params extends unknown[] = unknown[], Row = unknown>(
  db: BetterSqlite3.Database,
  sql: string,
): BetterSqlite3.Statement<Params, Row> {
  const statements = registry().get(db);
  if (!statements) throw new Error("statementOf: the database was not given to keepForProcessLifetime");
  let statement = statements.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  return statement as unknown as BetterSqlite3.Statement<Params, Row>;
}
