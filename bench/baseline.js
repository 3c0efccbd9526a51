// Builds another commit's dist/ into a temporary directory (git archive of the commit, this
// checkout's node_modules linked in, that commit's own `npm run build`), so a benchmark can run
// that build beside this one in the same run. Returns the path of its bin/webhook-cli.js and a cleanup.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

export function buildBaseline(commit) {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-baseline-"));
  const archive = execFileSync("git", ["archive", "--format=tar", commit], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  execFileSync("tar", ["-x", "-C", dir], { input: archive });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  execFileSync("npm", ["run", "build", "--silent"], { cwd: dir, stdio: "inherit" });
  const sha = execFileSync("git", ["rev-parse", "--short", commit], { cwd: ROOT, encoding: "utf8" }).trim();
  return { bin: join(dir, "bin/webhook-cli.js"), sha, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
