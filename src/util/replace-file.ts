import { renameSync, writeFileSync } from "node:fs";

/**
 * Writes `text` to a temporary file beside `path`, then renames it over `path`: a reader (or a
 * crash) sees the old content or the new, never half of it. Throws what fs throws.
 */
export function replaceFile(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}
