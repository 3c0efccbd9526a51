// What every bundle of the command line shares: scripts/build-cli.js (dist/cli/, split into chunks),
// scripts/build-sea.js (the single executable's one CommonJS file) and scripts/action-release.js (the
// GitHub Action's one ES module file). Each passes only what makes its bundle its own.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** For an ES module bundle: the CommonJS packages bundled (commander) call require() for Node's modules. */
export const ESM_REQUIRE_BANNER = 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);';

/** esbuild over the command line's one entry (src/cli/shell/main.ts), for Node.js, with its metafile (what went in); `options` adds the rest. */
export function bundleCli(options) {
  return build({
    absWorkingDir: ROOT,
    entryPoints: ["src/cli/shell/main.ts"],
    bundle: true,
    platform: "node",
    metafile: true,
    logLevel: "warning",
    ...options,
  });
}

/** The package a bundled input file comes from (`node_modules/@scope/name/…` → `@scope/name`), or undefined for the project's own. */
export function packageOf(input) {
  return /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
}
