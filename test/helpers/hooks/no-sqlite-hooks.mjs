// Resolves better-sqlite3 as if from the file system's root, where no node_modules holds it:
// Node's own resolver then fails with ERR_MODULE_NOT_FOUND, as in an install without it.
// node:sqlite fails as on a Node.js without it (20, or 22 before 22.13 without its flag).
// Synchronous, for module.registerHooks (test/helpers/hooks/install.mjs).
export function resolve(specifier, context, next) {
  if (specifier === "better-sqlite3") return next(specifier, { ...context, parentURL: "file:///" });
  if (specifier === "node:sqlite") {
    throw Object.assign(new Error(`No such built-in module: ${specifier}`), { code: "ERR_UNKNOWN_BUILTIN_MODULE" });
  }
  return next(specifier, context);
}
