import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { StateError, WebhookCliError } from "../../errors.js";
import type { MessageQueue } from "./message-queue.js";
import { loadSqlite, withSqliteCode, type SqlDatabase } from "./sqlite-database.js";
import { SqliteQueue } from "./sqlite-queue.js";

const DATABASE_FILE = "serve.db";

/**
 * Opens (creating) the SQLite queue under `stateDir`; node:sqlite (sqlite-database.ts) is
 * loaded only here. It holds every body and client address: a new directory is 0700
 * and a new database 0600. Any problem with the directory or the database
 * (a file, unreadable, read-only, corrupt, not a database) is one StateError.
 */
export async function openSqliteQueue(stateDir: string, options: { onStorageError?: (error: Error) => void } = {}): Promise<MessageQueue> {
  const open = await loadSqlite();
  const dir = resolve(stateDir);
  const file = join(dir, DATABASE_FILE);
  let db: SqlDatabase | undefined;
  try {
    makeStateDirectory(dir);
    if (existsSync(file) && !statSync(file).isFile()) throw new Error(`${file} is not a regular file`);
    // Created here so its mode (and that of the -wal and -shm files SQLite derives from it) is 0600.
    closeSync(openSync(file, "a", 0o600));
    db = open(file);
    return new SqliteQueue(db, options.onStorageError);
  } catch (error) {
    db?.close();
    if (error instanceof WebhookCliError) throw error;
    throw new StateError(`cannot use the state directory: ${stateProblem(error)}`, { field: "state", file: dir });
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
  const code = (withSqliteCode(error) as { code?: unknown }).code;
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
