// Registered with --import: makes better-sqlite3 unresolvable, as when the optional
// dependency was not installed (Node itself then raises ERR_MODULE_NOT_FOUND).
import { register } from "node:module";

register("./no-better-sqlite3-hooks.mjs", import.meta.url);
