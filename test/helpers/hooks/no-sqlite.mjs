// Loaded with --import: no SQLite at all, as on Node.js 20 without better-sqlite3 installed
// (better-sqlite3 unresolvable, node:sqlite unknown).
import { installResolveHook } from "./install.mjs";
import { resolve } from "./no-sqlite-hooks.mjs";

installResolveHook(resolve, new URL("./no-sqlite-hooks.mjs", import.meta.url));
