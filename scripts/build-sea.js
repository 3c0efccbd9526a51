// `npm run sea`: the command line as one file to download, a Node.js single executable application
// (docs/single-executable.md): build/sea/webhook-cli and build/sea/webhook-cli.sha256.
//
//   node scripts/build-sea.js [--node PATH] [--output PATH] [--no-strip] [--no-code-cache]
//
// 1. esbuild bundles src/cli/shell/main.ts with every dependency into one CommonJS script: no chunks, no
//    installed packages (a single executable's require() and import() reach Node's built-in modules
//    only; the commands' import("./index.js") are folded into the bundle, still run on first use).
//    CommonJS, not an ES module ("mainFormat": "module"): on Node.js 26 the code cache made at build
//    time spares a CommonJS main all its compiling (an ES module main still spends ~26 ms on it at
//    every start), and a CommonJS bundle loads Node's modules where they are first required, not all
//    at start: `--version` takes half the CPU time (bench/README.md#the-single-executable).
// 2. `node --build-sea` (Node.js 25.5+, the Node.js running this script) injects it, with the files
//    the code reads beside itself (package.json, the inspector's page: src/util/shipped-file.ts reads
//    them through node:sea there), into a copy of a Node.js binary: this one, or --node PATH's, which
//    must be the same version (the injected blob is read by the binary it is injected into).
// Nothing is downloaded: the binary is the one given or the one running.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bundleCli, ROOT } from "./cli-bundle.js";
import { checkNode, fail } from "./sea-node.js";

const WORK = join(ROOT, "build/sea/work");

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 25 || (major === 25 && minor < 5)) fail(`needs Node.js 25.5 or later (node --build-sea); this is Node.js ${process.version}`);
const flags = options();
const output = resolve(flags.output ?? join(ROOT, "build/sea/webhook-cli"));
const node = checkNode(flags.node === undefined ? process.execPath : resolve(flags.node));
// V8's compiled code, made by this Node.js: only for a binary of this platform and version. It is not
// the same bytes from one build to the next; without it two builds are identical.
const codeCache = node.native && !flags["no-code-cache"];
mkdirSync(WORK, { recursive: true });
mkdirSync(dirname(output), { recursive: true });

const main = await bundle();
const executable = flags["no-strip"] || node.format !== "ELF" ? { path: node.path, note: "not stripped" } : stripped(node.path);
const config = join(WORK, "sea-config.json");
writeFileSync(config, `${JSON.stringify(seaConfig(main, executable.path), null, 1)}\n`);
const built = spawnSync(process.execPath, ["--build-sea", config], { cwd: ROOT, encoding: "utf8" });
if (executable.path !== node.path) rmSync(dirname(executable.path), { recursive: true, force: true });
if (built.status !== 0) fail(`node --build-sea failed:\n${built.stderr}${built.stdout}`);
const sum = createHash("sha256").update(readFileSync(output)).digest("hex");
// The form `sha256sum -c` reads, the file named as it sits beside it.
writeFileSync(`${output}.sha256`, `${sum}  ${basename(output)}\n`);
console.log(
  `${output} (${(statSync(output).size / 1e6).toFixed(1)} MB; Node.js ${node.version} ${node.platform}; ${executable.note}; code cache ${codeCache ? "on" : "off"})`,
);
console.log(`${output}.sha256: ${sum}`);

function options() {
  try {
    return parseArgs({
      options: {
        node: { type: "string" },
        output: { type: "string" },
        "no-strip": { type: "boolean", default: false },
        "no-code-cache": { type: "boolean", default: false },
      },
    }).values;
  } catch (error) {
    fail(`${error.message} (usage: npm run sea -- [--node PATH] [--output PATH] [--no-strip] [--no-code-cache])`);
  }
}

/** The command line as one CommonJS script with every package in it; fails on an import the executable could not resolve. */
async function bundle() {
  const file = join(WORK, "webhook-cli.cjs");
  const result = await bundleCli({
    outfile: file,
    format: "cjs",
    target: `node${process.versions.node}`,
    // import.meta has no CommonJS form: its URL is the executable's (src/util/shipped-file.ts reads no file there).
    define: { "import.meta.url": "__import_meta_url" },
    banner: { js: 'const __import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
  });
  const builtin = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
  const outside = Object.values(result.metafile.outputs)
    .flatMap((out) => out.imports)
    .filter((imported) => imported.external && !builtin.has(imported.path));
  if (outside.length > 0)
    fail(`the bundle imports ${[...new Set(outside.map((imported) => imported.path))].join(", ")}, which a single executable cannot load`);
  return file;
}

/** The SEA configuration (docs/single-executable.md#how-it-is-built). */
function seaConfig(main, executable) {
  return {
    main,
    mainFormat: "commonjs",
    executable,
    output,
    disableExperimentalSEAWarning: true,
    useCodeCache: codeCache,
    useSnapshot: false,
    // Node's own flags come from NODE_OPTIONS only (replay's relaunch puts its flag there: src/cli/shell/relaunch.ts).
    execArgvExtension: "env",
    assets: assets(),
  };
}

/** The files src/util/shipped-file.ts reads, by the names it asks for. */
function assets() {
  const files = { "../package.json": join(ROOT, "package.json") };
  for (const name of readdirSync(join(ROOT, "src/inspector/assets"))) files[`inspector/assets/${name}`] = join(ROOT, "src/inspector/assets", name);
  return files;
}

/** A copy of the binary without its debugging symbols (a third of its size), or the binary itself where `strip` cannot. */
function stripped(path) {
  const copy = join(mkdtempSync(join(tmpdir(), "webhook-cli-sea-")), "node");
  copyFileSync(path, copy);
  const strip = spawnSync("strip", [copy], { encoding: "utf8" });
  if (strip.status === 0) return { path: copy, note: "stripped" };
  rmSync(dirname(copy), { recursive: true, force: true });
  return { path, note: `not stripped (strip: ${strip.error?.message ?? strip.stderr.trim()})` };
}
