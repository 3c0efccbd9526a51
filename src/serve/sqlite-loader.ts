import type BetterSqlite3 from "better-sqlite3";
import { UsageError } from "../errors.js";
import { betterSqlite3Database } from "./better-sqlite3-database.js";
import { nodeSqliteDatabase, type NodeSqliteModule } from "./node-sqlite-database.js";
import type { SqlDatabase, SqliteDriver } from "./sql-database.js";

/*
 * The durable queue's SQLite, loaded only when a queue is opened: Node's
 * built-in node:sqlite where this Node.js has it without a flag (22.13+), else
 * better-sqlite3 when the user installed it (Node 20: not a dependency, so an
 * install compiles nothing). With neither, one line naming both ways out.
 */

/** Opens a database file (a failure there is the caller's StateError). */
export type SqlOpener = (file: string) => SqlDatabase;

const NEITHER = (version: string) =>
  `the durable queue needs SQLite: Node.js 22.13 or later has it built in (this is Node.js ${version}), ` +
  "or install better-sqlite3 ('npm install better-sqlite3'; 'npm install -g better-sqlite3' beside a global install); " +
  "--memory keeps the queue in memory instead (nothing survives a restart)";

// Built for another Node.js, or never built (install scripts skipped: --ignore-scripts, or
// ignore-scripts=true in .npmrc, which a plain `npm rebuild` obeys too).
const BROKEN = (version: string) =>
  `the durable queue's better-sqlite3 cannot be loaded on this Node.js ${version} (built for another Node.js, or its install script was skipped): ` +
  "run 'npm rebuild better-sqlite3 --ignore-scripts=false' in the project that installed it ('npm rebuild -g better-sqlite3 --ignore-scripts=false' beside a global install); " +
  "--memory keeps the queue in memory instead";

/** The first driver this Node.js can load (`only`: that one or a UsageError, for tests and the benchmark). */
export async function loadSqlite(only?: SqliteDriver): Promise<SqlOpener> {
  if (only !== "better-sqlite3") {
    const sqlite = await importNodeSqlite();
    if (sqlite) return (file) => nodeSqliteDatabase(sqlite, file);
    if (only === "node:sqlite") throw new UsageError(`node:sqlite is not available on Node.js ${process.version} without a flag (22.13 or later has it)`);
  }
  const Database = await importBetterSqlite3();
  if (Database) return (file) => withLoadableAddon(() => betterSqlite3Database(Database, file));
  throw new UsageError(NEITHER(process.version));
}

/** node:sqlite, or undefined where this Node.js has none (20) or only behind --experimental-sqlite (22.5–22.12). */
async function importNodeSqlite(): Promise<NodeSqliteModule | undefined> {
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
    return (await import("node:sqlite" as string)) as NodeSqliteModule;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_UNKNOWN_BUILTIN_MODULE") return undefined;
    throw error;
  } finally {
    process.emitWarning = emitWarning;
  }
}

async function importBetterSqlite3(): Promise<typeof BetterSqlite3 | undefined> {
  try {
    return (await import("better-sqlite3")).default;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw error;
  }
}

// The native addon loads on the first `new Database`: a build for another Node.js fails there.
function withLoadableAddon<T>(open: () => T): T {
  try {
    return open();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_DLOPEN_FAILED" || /NODE_MODULE_VERSION|bindings file/.test((error as Error).message)) {
      throw new UsageError(BROKEN(process.version));
    }
    throw error;
  }
}
