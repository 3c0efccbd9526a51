import type BetterSqlite3 from "better-sqlite3";
import { UsageError } from "../errors.js";

/*
 * better-sqlite3 is an optional dependency (a native addon): loaded only when a
 * durable queue is opened, with a one-line answer when it is missing or was
 * built for another Node.js.
 */

const SQLITE_NEEDED = "the durable queue needs better-sqlite3, an optional dependency";

/** better-sqlite3 is optional: without it (or built for another Node.js) say how to get it. */
export async function loadBetterSqlite3(): Promise<typeof BetterSqlite3> {
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
export function withSqliteNeeded<T>(open: () => T): T {
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
