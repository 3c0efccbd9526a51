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

/** The node_modules packages among the URLs (`undici`, `zod`…). */
export function packagesOf(urls: readonly string[]): Set<string> {
  const names = urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined);
  return new Set(names);
}

/** The project modules among the URLs, relative to dist/ (`cli/main.js`…). */
export function distModulesOf(urls: readonly string[]): string[] {
  const dist = `${pathToFileURL(join(ROOT, "dist")).href}/`;
  return urls.filter((url) => url.startsWith(dist)).map((url) => url.slice(dist.length));
}
