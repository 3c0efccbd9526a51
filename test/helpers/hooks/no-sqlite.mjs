// Registered with --import: no SQLite at all, as on Node.js 20 without better-sqlite3 installed
// (better-sqlite3 unresolvable, node:sqlite unknown).
import { register } from "node:module";

register("./no-sqlite-hooks.mjs", import.meta.url);
