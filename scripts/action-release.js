// The GitHub Action's command line (action.yml, action/): a release commits it, bundled whole, at
// the tag, because `uses: OWNER/webhook-cli@v1` runs the repository as checked out at the tag,
// where there is no node_modules and no dist/ (docs/guides/ci.md#how-the-action-gets-its-command-line).
//
//   node scripts/action-release.js build     action/cli/ (one file with its dependencies) and action/inspector/assets/
//   node scripts/action-release.js check     exits 1 when the action/ files differ from a fresh build (run at a tag)
//   node scripts/action-release.js release   a commit on top of HEAD that adds them (main never holds them), tagged
//                                            v<package.json version>, and the major tag (v1) moved to it
//
// action/ is laid out as dist/ is, so what the command line finds beside its own file resolves the
// same: ../../package.json (its version) and ../inspector/assets/ (the inspector's page).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { bundleCli, ESM_REQUIRE_BANNER, packageOf, ROOT } from "./cli-bundle.js";

const OUTPUTS = ["action/cli", "action/inspector"];

/** Writes the bundle, its dependencies' licences and the inspector's assets under `into`. */
async function buildInto(into) {
  for (const output of OUTPUTS) rmSync(join(into, output), { recursive: true, force: true });
  const result = await bundleCli({
    outfile: join(into, "action/cli/webhook-cli.js"),
    format: "esm",
    // The runner's Node.js for `using: node24`.
    target: "node24",
    minifyWhitespace: true,
    legalComments: "none",
    banner: { js: ESM_REQUIRE_BANNER },
  });
  writeFileSync(join(into, "action/cli/THIRD-PARTY-LICENSES.txt"), licences(Object.keys(result.metafile.inputs)));
  cpSync(join(ROOT, "src/inspector/assets"), join(into, "action/inspector/assets"), { recursive: true });
}

/** Each bundled package's name, version and licence text, in name order. */
function licences(inputs) {
  const packages = new Set(inputs.map(packageOf).filter(Boolean));
  return [...packages]
    .sort()
    .map((name) => {
      const dir = join(ROOT, "node_modules", name);
      const { version, license } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      const file = readdirSync(dir).find((entry) => /^licen[cs]e/i.test(entry));
      return `${name} ${version} (${license})\n\n${file ? readFileSync(join(dir, file), "utf8").trim() : "(no licence file in the package)"}\n`;
    })
    .join(`\n${"-".repeat(72)}\n\n`);
}

/** The files under the outputs of `root`, relative to it. */
function filesOf(root) {
  const walk = (dir) =>
    existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)])) : [];
  return OUTPUTS.flatMap((output) => walk(join(root, output))).map((file) => relative(root, file));
}

async function check() {
  const fresh = mkdtempSync(join(tmpdir(), "webhook-cli-action-"));
  try {
    await buildInto(fresh);
    const names = new Set([...filesOf(fresh), ...filesOf(ROOT)]);
    const stale = [...names]
      .sort()
      .filter(
        (name) => !existsSync(join(ROOT, name)) || !existsSync(join(fresh, name)) || !readFileSync(join(ROOT, name)).equals(readFileSync(join(fresh, name))),
      );
    if (stale.length === 0) return console.log("action/: the bundle is what this commit's sources build");
    console.error(`action/: not what this commit's sources build (${stale.join(", ")}): run node scripts/action-release.js build, or release again`);
    process.exitCode = 1;
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

async function release() {
  const git = (args, env = {}) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...env } }).trim();
  if (git(["status", "--porcelain"]) !== "") throw new Error("the work tree has changes: a release is made from a commit as it is");
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const tag = `v${version}`;
  const major = `v${version.split(".")[0]}`;
  await buildInto(ROOT);
  // A throwaway index: HEAD's tree plus the built files, committed without touching the branch or the work tree's index.
  const index = join(mkdtempSync(join(tmpdir(), "webhook-cli-index-")), "index");
  try {
    git(["read-tree", "HEAD"], { GIT_INDEX_FILE: index });
    git(["add", "--force", "--", ...OUTPUTS], { GIT_INDEX_FILE: index });
    const tree = git(["write-tree"], { GIT_INDEX_FILE: index });
    const commit = git(["commit-tree", tree, "-p", "HEAD", "-m", `Release ${tag}: the GitHub Action's bundled command line (action/cli/)`]);
    git(["tag", "--annotate", tag, "-m", `webhook-cli ${tag}`, commit]);
    git(["tag", "--force", major, commit]);
    console.log(`${tag} and ${major} point at ${commit}. Publish them with: git push origin ${tag} && git push --force origin ${major}`);
  } finally {
    rmSync(dirname(index), { recursive: true, force: true });
  }
}

const task = process.argv[2];
const tasks = { build: () => buildInto(ROOT), check, release };
if (!(task in tasks)) {
  console.error("usage: node scripts/action-release.js build|check|release");
  process.exit(2);
}
try {
  await tasks[task]();
} catch (error) {
  console.error(`action-release: ${error.message}`);
  process.exitCode = 1;
}
