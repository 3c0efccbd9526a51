import { createRequire } from "node:module";

/** The library's name and version as sent in every batch's `context.library` (from package.json). */
export const LIBRARY: { readonly name: string; readonly version: string } = (() => {
  // ../../package.json from both src/client (tests) and dist/client (the package).
  const pkg = createRequire(import.meta.url)("../../package.json") as { name: string; version: string };
  return { name: pkg.name, version: pkg.version };
})();
