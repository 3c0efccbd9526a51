// See broken-sqlite.mjs.
const BROKEN = `data:text/javascript,${encodeURIComponent(
  "export default class Database { constructor() { throw new Error('Could not locate the bindings file. Tried: → build/better_sqlite3.node'); } }",
)}`;

export async function resolve(specifier, context, next) {
  if (specifier === "better-sqlite3") return { url: BROKEN, shortCircuit: true };
  if (specifier === "node:sqlite") {
    throw Object.assign(new Error(`No such built-in module: ${specifier}`), { code: "ERR_UNKNOWN_BUILTIN_MODULE" });
  }
  return next(specifier, context);
}
