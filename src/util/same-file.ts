import { realpathSync } from "node:fs";
import { resolve } from "node:path";

/** Whether two paths name the same file (links resolved when the files exist). */
export function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
}
