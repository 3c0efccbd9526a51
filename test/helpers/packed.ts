import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./loaded-modules.js";

/** A child process's outcome: its exit status and what it printed. */
export interface Ran {
  code: number;
  output: string;
}

export function run(command: string, args: readonly string[], cwd: string): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

/**
 * A new project (`"type": "module"`) in `dir` that installed the package as a user does:
 * `npm pack` of the built package (npm run build first), unpacked into node_modules/webhook-cli
 * as npm unpacks it, beside links to this repository's installed copies of its dependencies and
 * of @types/node (what `npm install webhook-cli @types/node` adds; nothing is fetched).
 * Returns where the package is and the paths it holds.
 */
export async function installPacked(dir: string): Promise<{ packageDir: string; files: string[] }> {
  if (!existsSync(join(ROOT, "dist/index.d.ts"))) throw new Error("dist/ is not built: npm run build");
  const packed = await run("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], ROOT);
  if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.output}`);
  const tarball = join(dir, packed.output.trim().split("\n").at(-1) as string);
  const modules = join(dir, "node_modules");
  const packageDir = join(modules, "webhook-cli");
  mkdirSync(packageDir, { recursive: true });
  const unpacked = await run("tar", ["-xzf", tarball, "-C", packageDir, "--strip-components=1"], dir);
  if (unpacked.code !== 0) throw new Error(`tar failed: ${unpacked.output}`);
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  mkdirSync(join(modules, "@types"));
  for (const name of [...Object.keys(manifest.dependencies), "@types/node"]) symlinkSync(join(ROOT, "node_modules", name), join(modules, name));
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "user-project", private: true, type: "module" })}\n`);
  return { packageDir, files: filesUnder(packageDir).map((file) => relative(packageDir, file)) };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}
