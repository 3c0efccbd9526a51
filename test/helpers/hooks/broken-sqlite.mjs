// Registered with --import: SQLite as on Node.js 20 with better-sqlite3 installed but its addon not
// built (installed with install scripts skipped, or built for another Node.js): node:sqlite
// unknown, better-sqlite3 a module whose Database throws as the real one does then.
import { register } from "node:module";

register("./broken-sqlite-hooks.mjs", import.meta.url);
