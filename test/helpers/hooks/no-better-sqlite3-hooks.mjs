// Resolves better-sqlite3 as if from the file system's root, where no node_modules holds it:
// Node's own resolver then fails with ERR_MODULE_NOT_FOUND, as in an install without it.
export async function resolve(specifier, context, next) {
  if (specifier === "better-sqlite3") return next(specifier, { ...context, parentURL: "file:///" });
  return next(specifier, context);
}
