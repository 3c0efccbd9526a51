import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/*
 * CONTRIBUTING.md's "Where each module is tested" names, for every module in src/, the test files that
 * exercise it. This keeps it true: every module has a row and every row a module; every test named
 * exists and loads the module, through what it imports (statically or on demand), or through the
 * built package it runs (the CLI, `webhook-cli`, `webhook-cli/testing`).
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SECTION = "## Where each module is tested";

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** The modules: TypeScript in src/, and the inspector page's scripts. */
const MODULES = filesUnder("src")
  .filter((file) => file.endsWith(".ts") || (file.startsWith("src/inspector/assets/") && file.endsWith(".js")))
  .sort();

/** The map's rows: module → test files, in the order written. */
function mapRows(): { module: string; tests: string[] }[] {
  const text = readFileSync(join(ROOT, "CONTRIBUTING.md"), "utf8");
  const start = text.indexOf(SECTION);
  expect(start, `CONTRIBUTING.md has a section "${SECTION}"`).toBeGreaterThanOrEqual(0);
  const section = text.slice(start + SECTION.length).split(/\n## /)[0] as string;
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [module, tests] = line
        .split("|")
        .slice(1, 3)
        .map((cell) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string));
      return { module: module?.[0] ?? "", tests: tests ?? [] };
    });
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;
/** The built package a test runs stands for its sources: the CLI's entry, and the two entry points by name. */
const BUILT_CLI = "bin/webhook-cli.js";
const PACKAGE = /["'](webhook-cli(?:\/testing)?)["']/g;
const ENTRY_POINTS: Readonly<Record<string, string>> = {
  "webhook-cli": "src/index.ts",
  "webhook-cli/testing": "src/testing.ts",
};

/** The files `file` loads: its relative imports resolved (`.js` to the `.ts` beside it), and the sources of what it runs built. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const found = [...text.matchAll(SPECIFIER)].flatMap(([, specifier]) => {
    const spec = specifier as string;
    if (!spec.startsWith(".")) return [];
    const path = normalize(join(dirname(file), spec));
    return [path, path.replace(/\.js$/, ".ts")].filter((candidate) => existsSync(join(ROOT, candidate))).slice(-1);
  });
  if (file.startsWith("test/")) {
    if (text.includes(BUILT_CLI)) found.push("src/cli/shell/main.ts");
    for (const [, name] of text.matchAll(PACKAGE)) found.push(ENTRY_POINTS[name as string] as string);
  }
  // The inspector serves the page's scripts as files.
  if (file === "src/inspector/server.ts") found.push(...MODULES.filter((module) => module.startsWith("src/inspector/assets/")));
  return found;
}

const loaded = new Map<string, Set<string>>();
/** Every file `test` loads, directly or not. */
function reachedFrom(test: string): Set<string> {
  const known = loaded.get(test);
  if (known) return known;
  const seen = new Set<string>([test]);
  const queue = [test];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const file of importsOf(next)) {
      if (!seen.has(file)) {
        seen.add(file);
        queue.push(file);
      }
    }
  }
  loaded.set(test, seen);
  return seen;
}

describe("CONTRIBUTING's map from module to test", () => {
  const rows = mapRows();

  it("has one row per module in src/, in path order, and no row for a module that is gone", () => {
    const mapped = rows.map((row) => row.module);
    expect(
      MODULES.filter((module) => !mapped.includes(module)),
      "modules without a row",
    ).toEqual([]);
    expect(
      mapped.filter((module) => !MODULES.includes(module)),
      "rows for no module",
    ).toEqual([]);
    expect(mapped).toEqual(MODULES);
  });

  it("names at least one test file for each module, and only files that exist", () => {
    expect(
      rows.filter((row) => row.tests.length === 0).map((row) => row.module),
      "rows without a test",
    ).toEqual([]);
    const named = rows.flatMap((row) => row.tests);
    expect([...new Set(named.filter((test) => !test.endsWith(".test.ts") || !existsSync(join(ROOT, test))))], "named tests that do not exist").toEqual([]);
  });

  it("names only tests that load the module", () => {
    const loose = rows.flatMap((row) =>
      row.tests.filter((test) => existsSync(join(ROOT, test)) && !reachedFrom(test).has(row.module)).map((test) => `${row.module} ← ${test}`),
    );
    expect(loose).toEqual([]);
  });
});
