// The second half of `npm run build` (after tsc has built the library and its .d.ts into dist/):
// the command-line entry as one bundle with code splitting, built by esbuild into dist/cli/.
//
// src/cli/shell/main.ts is the one entry point. Each command's declaration (command.ts) loads its
// implementation with import("./index.js"), and esbuild splits every dynamic import into its own
// chunk, so a new command registered in src/cli/shell/command-table.ts is picked up with no build
// configuration; a folder under src/cli/commands/ whose implementation the bundle does not reach
// (not registered) fails the build. Start-up then reads main.js and a few chunks, not a hundred
// modules. commander and chalk are bundled (start-up needs them); undici, zod and ora stay
// installed packages, loaded only by the commands that use them.
//
// Every chunk sits in dist/cli/, two levels under the package root like the modules tsc writes,
// so `../../package.json` and `../inspector/assets/` resolve from a chunk as from dist/<room>/.
// dist/cli-modules.json (not packed) lists the modules in each chunk, from esbuild's metafile:
// test/e2e/loading.test.ts reads it to tell which modules a process loaded.
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { bundleCli, ESM_REQUIRE_BANNER, packageOf, ROOT } from "./cli-bundle.js";

const OUT = join(ROOT, "dist/cli");
// Installed packages the bundle imports at run time (package.json's dependencies).
const EXTERNAL = ["undici", "zod", "ora"];
const PROGRAM = join(ROOT, "src/cli/shell/program.ts");

/** Builds every module loaded with import() from src/ as if it imported the program first (see above). */
const afterProgram = {
  name: "after-program",
  setup(builder) {
    const lazy = new Set();
    builder.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== "dynamic-import" || !args.importer.startsWith(join(ROOT, "src"))) return undefined;
      const target = await builder.resolve(args.path, { kind: "import-statement", resolveDir: args.resolveDir, importer: args.importer });
      if (!target.external && target.path !== PROGRAM) lazy.add(target.path);
      return undefined;
    });
    builder.onLoad({ filter: /\.ts$/ }, (args) =>
      lazy.has(args.path) ? { contents: `import ${JSON.stringify(PROGRAM)};\n${readFileSync(args.path, "utf8")}`, loader: "ts" } : undefined,
    );
  },
};

rmSync(OUT, { recursive: true, force: true });
const result = await bundleCli({
  outdir: OUT,
  splitting: true,
  format: "esm",
  target: "node22.13",
  external: EXTERNAL,
  chunkNames: "[name]-[hash]",
  plugins: [afterProgram],
  banner: { js: ESM_REQUIRE_BANNER },
});

// Each chunk's modules: dist-relative names (src/x/y.ts → x/y.js) and packages (node_modules/<name>).
const modules = {};
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  const names = new Set();
  for (const input of Object.keys(output.inputs)) {
    const pkg = packageOf(input);
    names.add(pkg !== undefined ? `node_modules/${pkg}` : input.replace(/^src\//, "").replace(/\.ts$/, ".js"));
  }
  modules[relative(join(ROOT, "dist"), join(ROOT, file))] = [...names].sort();
}
writeFileSync(join(ROOT, "dist/cli-modules.json"), `${JSON.stringify(modules, null, 1)}\n`);

// A command folder the bundle does not reach is a command nobody can run: say so, loudly.
const bundled = new Set(Object.keys(result.metafile.inputs));
const unreached = readdirSync(join(ROOT, "src/cli/commands"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, "src/cli/commands", entry.name, "index.ts")))
  .filter((entry) => !bundled.has(`src/cli/commands/${entry.name}/index.ts`))
  .map((entry) => entry.name);
if (unreached.length > 0) {
  console.error(
    `build-cli: ${unreached.map((name) => `src/cli/commands/${name}/index.ts`).join(", ")} ${unreached.length === 1 ? "is" : "are"} not reached from src/cli/shell/main.ts: ` +
      "register the command in src/cli/shell/command-table.ts (its command.ts loads ./index.js with import())",
  );
  process.exit(1);
}

// The inspector's page, script and styles (read at run time from ../inspector/assets/).
cpSync(join(ROOT, "src/inspector/assets"), join(ROOT, "dist/inspector/assets"), { recursive: true });
