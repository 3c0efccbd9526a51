import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const hook = (name: string): string => pathToFileURL(fileURLToPath(new URL(`./hooks/${name}`, import.meta.url))).href;

/** Runs `node --import <recorder> ...args` in the repository and returns every module URL it resolved. */
export async function modulesLoadedBy(args: readonly string[]): Promise<{ urls: string[]; stdout: string; stderr: string; code: number }> {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-loaded-"));
  const out = join(dir, "resolved.txt");
  try {
    const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
      execFile(
        process.execPath,
        ["--import", hook("record-resolved.mjs"), ...args],
        { cwd: ROOT, env: { ...process.env, RECORD_RESOLVED_TO: out, NO_COLOR: "1" } },
        (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? Number(error.code ?? 1) : 0 }),
      );
    });
    return { urls: readFileSync(out, "utf8").split("\n").filter(Boolean), stdout, stderr, code };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the command-line bundle's chunks hold (dist/cli-modules.json, from esbuild's metafile,
 * written by scripts/build-cli.js): a chunk loaded means its modules and bundled packages loaded.
 */
function bundleContents(): Record<string, string[]> {
  return JSON.parse(readFileSync(join(ROOT, "dist/cli-modules.json"), "utf8")) as Record<string, string[]>;
}

/** The dist/-relative paths of the URLs under dist/ (`cli/main.js`, `index.js`…). */
function distPathsOf(urls: readonly string[]): string[] {
  const dist = `${pathToFileURL(join(ROOT, "dist")).href}/`;
  return urls.filter((url) => url.startsWith(dist)).map((url) => url.slice(dist.length));
}

/** The node_modules packages the process loaded (`undici`, `zod`…): installed ones resolved, and those bundled into loaded chunks. */
export function packagesOf(urls: readonly string[]): Set<string> {
  const names = urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined);
  const contents = bundleContents();
  for (const path of distPathsOf(urls)) {
    for (const name of contents[path] ?? []) if (name.startsWith("node_modules/")) names.push(name.slice("node_modules/".length));
  }
  return new Set(names);
}

/**
 * The project modules the process loaded, as paths relative to dist/ (`cli/shell/main.js`…): the library's
 * modules as resolved, and for each command-line chunk resolved, the source modules bundled into it
 * (src/cli/shell/program.ts as `cli/shell/program.js`), so the checks read the same whether or not a module was bundled.
 */
export function distModulesOf(urls: readonly string[]): string[] {
  const contents = bundleContents();
  const modules: string[] = [];
  for (const path of distPathsOf(urls)) {
    const bundled = contents[path];
    if (bundled === undefined) modules.push(path);
    else for (const name of bundled) if (!name.startsWith("node_modules/")) modules.push(name);
  }
  return modules;
}

/** The command-line chunks (dist/cli/*.js) the process loaded: how many files start-up reads. */
export function cliChunksOf(urls: readonly string[]): string[] {
  const contents = bundleContents();
  return distPathsOf(urls).filter((path) => contents[path] !== undefined);
}
