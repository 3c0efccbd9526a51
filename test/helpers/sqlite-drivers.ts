import { loadSqlite } from "../../src/serve/sqlite-loader.js";
import type { SqliteDriver } from "../../src/serve/sql-database.js";

/**
 * The SQLite drivers this Node.js can load: better-sqlite3 (the devDependency,
 * built for the Node.js that runs the tests) and node:sqlite where Node has it
 * (22.13+). CI's Node 20 pass has the first, its Node 24 pass both.
 */
export async function availableDrivers(): Promise<SqliteDriver[]> {
  const drivers: SqliteDriver[] = [];
  for (const driver of ["better-sqlite3", "node:sqlite"] as const) {
    try {
      // better-sqlite3 imports on any Node.js; its addon fails only on opening a database.
      (await loadSqlite(driver))(":memory:").close();
      drivers.push(driver);
    } catch {}
  }
  return drivers;
}
