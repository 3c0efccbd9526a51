import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// `npm ci` compiles nothing and runs no install script: a dependency with one (esbuild's postinstall
// only checks its platform binary, which esbuild finds without it) is denied in package.json's
// allowScripts, so npm skips it without a word. A new dependency with an install script fails here.
const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), "utf8"));

describe("install scripts", () => {
  it("every package in the lockfile that has one is denied in package.json's allowScripts", () => {
    const { allowScripts = {} } = read("package.json") as { allowScripts?: Record<string, boolean> };
    const { packages } = read("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(packages)
      .filter(([path, entry]) => path !== "" && entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    expect(withScripts).toContain("esbuild");
    expect(withScripts.filter((name) => allowScripts[name] !== false)).toEqual([]);
    // Entries for packages no longer installed would hide nothing, but say something untrue.
    expect(Object.keys(allowScripts).filter((name) => !withScripts.includes(name))).toEqual([]);
  });
});
