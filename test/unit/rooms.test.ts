import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// CONTRIBUTING.md (layout): what the rooms of src/ may import, as far as a file's own import lines show.
const SRC = fileURLToPath(new URL("../../src", import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

/** Each module of src/ with the src/-relative paths it imports (`receiver/history/index.ts`). */
const IMPORTS = filesUnder(SRC).map((file) => {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)\.js"/g)].map((match) => match[1] as string);
  return { module: relative(SRC, file), imports: specifiers.map((specifier) => `${relative(SRC, join(dirname(file), specifier))}.ts`) };
});

describe("the rooms of src/", () => {
  it("reads the import lines of every module", () => {
    expect(IMPORTS.length).toBeGreaterThan(200);
    expect(IMPORTS.find(({ module }) => module === "testing/receiver.ts")?.imports).toContain("receiver/history/index.ts");
  });

  it("the request history is used through its index from outside receiver/history/", () => {
    const insides = IMPORTS.filter(({ module }) => !module.startsWith("receiver/history/")).flatMap(({ module, imports }) =>
      imports.filter((path) => path.startsWith("receiver/history/") && path !== "receiver/history/index.ts").map((path) => `${module} -> ${path}`),
    );
    expect(insides).toEqual([]);
  });

  it("the generic rooms (util/, json/, safe-text/, http/) import no product room, only each other and errors.ts", () => {
    const generic = /^(util|json|safe-text|http)\//;
    const climbs = IMPORTS.filter(({ module }) => generic.test(module)).flatMap(({ module, imports }) =>
      imports.filter((path) => !generic.test(path) && path !== "errors.ts").map((path) => `${module} -> ${path}`),
    );
    expect(climbs).toEqual([]);
  });
});
