import { readFileSync } from "node:fs";
import { getAsset, isSea } from "node:sea";

/**
 * A file the package ships beside its code, by its path from the code's root: src/ in a clone,
 * dist/ installed, where every module (and the command line's bundle, dist/cli/) sits one folder
 * down, so `../${path}` from here is the same file from all of them; `../package.json` is the
 * package's own. Inside the single executable (`npm run sea`) there is no package on disk: the file
 * is the executable's asset of the same name (scripts/build-sea.js adds them).
 */
export function shippedFile(path: string): Buffer {
  if (isSea()) return Buffer.from(getAsset(path));
  return readFileSync(new URL(`../${path}`, import.meta.url));
}

/** package.json's name and version. */
export function packageJson(): { name: string; version: string } {
  return JSON.parse(shippedFile("../package.json").toString("utf8")) as { name: string; version: string };
}
