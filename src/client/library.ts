import { packageJson } from "../util/shipped-file.js";

/** The library's name and version as sent in every batch's `context.library` (from package.json). */
export const LIBRARY: { readonly name: string; readonly version: string } = (() => {
  const { name, version } = packageJson();
  return { name, version };
})();
