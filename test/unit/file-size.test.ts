import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// CONTRIBUTING.md (layout): no file in src/ over 300 lines; split where a file holds two
// things. The inspector's page assets count too.
const SRC = fileURLToPath(new URL("../../src", import.meta.url));
const MAX_LINES = 300;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]));
}

describe("source files", () => {
  it(`are at most ${MAX_LINES} lines each`, () => {
    const files = filesUnder(SRC);
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
