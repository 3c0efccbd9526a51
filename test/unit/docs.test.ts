import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { anchorsOf, linksOf, markdownFiles } from "../helpers/markdown.js";

/*
 * The documentation's own rules (CONTRIBUTING.md, "Documentation rules"): the README stays short,
 * every relative link and anchor resolves, every docs/ section a comment cites exists, and the
 * docs carry no leftovers (section markers, issue numbers).
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const README_MAX_LINES = 350;

const DOCS = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "bench/README.md", ...markdownFiles(join(ROOT, "docs")).map((file) => relative(ROOT, file))];
const read = (file: string): string => readFileSync(join(ROOT, file), "utf8");

const anchorCache = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (!found) {
    found = anchorsOf(readFileSync(file, "utf8"));
    anchorCache.set(file, found);
  }
  return found;
}

/** Why `target` (a link in `from`, or a path from the root when `from` is undefined) does not resolve, or undefined. */
function brokenLink(from: string, target: string): string | undefined {
  const [path = "", anchor] = target.split("#", 2);
  const file = path === "" ? join(ROOT, from) : resolve(dirname(join(ROOT, from)), decodeURIComponent(path));
  if (!existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (anchor === undefined || anchor === "") return undefined;
  if (!statSync(file).isFile() || !file.endsWith(".md")) return `#${anchor} in a file that is not Markdown`;
  return anchors(file).has(anchor) ? undefined : `no heading #${anchor} in ${relative(ROOT, file)}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "out" ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

describe("README size", () => {
  it(`README.md has at most ${README_MAX_LINES} lines, and CONTRIBUTING.md states the rule`, () => {
    const lines = read("README.md").split("\n").length;
    expect(lines, "README.md: keep a new section to a few lines and put the details in docs/").toBeLessThanOrEqual(README_MAX_LINES);
    expect(read("CONTRIBUTING.md")).toContain(`README.md stays at most ${README_MAX_LINES} lines`);
  });
});

describe("links", () => {
  it("the documentation files are found", () => {
    expect(DOCS).toEqual(expect.arrayContaining(["docs/README.md", "docs/commands/send.md", "docs/guides/ci.md"]));
  });

  it.each(DOCS)("%s: every relative link reaches a file, and its #anchor a heading", (file) => {
    const broken = linksOf(read(file))
      .filter((link) => !/^[a-z][a-z+.-]*:/i.test(link.target))
      .map((link) => ({ line: link.line, target: link.target, problem: brokenLink(file, link.target) }))
      .filter((link) => link.problem !== undefined);
    expect(broken).toEqual([]);
  });

  it("every docs/ section a comment in src/, test/, bench/, scripts/ or action/ cites exists", () => {
    const cited = new Map<string, string>();
    // action/cli/ is the built bundle a release commits, not a source.
    const action = readdirSync(join(ROOT, "action"))
      .filter((name) => name.endsWith(".js"))
      .map((name) => join(ROOT, "action", name));
    const files = [
      ...sourceFiles(join(ROOT, "src")),
      ...sourceFiles(join(ROOT, "test")),
      ...sourceFiles(join(ROOT, "bench")),
      ...sourceFiles(join(ROOT, "scripts")),
      ...action,
    ];
    // This file names broken targets on purpose, to show the check fails on them.
    for (const file of files.filter((path) => path !== fileURLToPath(import.meta.url))) {
      for (const match of readFileSync(file, "utf8").matchAll(/\bdocs\/([\w/-]+\.md)(#[\w-]+)?/g)) {
        cited.set(`docs/${match[1]}${match[2] ?? ""}`, relative(ROOT, file));
      }
    }
    expect(cited.size).toBeGreaterThan(50);
    const broken = [...cited].map(([target, file]) => ({ target, file, problem: brokenLink("README.md", target) })).filter((c) => c.problem !== undefined);
    expect(broken).toEqual([]);
  });

  it("catches a broken file, a broken anchor, and a heading's anchor as GitHub writes it", () => {
    expect(brokenLink("README.md", "docs/nowhere.md")).toMatch(/no file/);
    expect(brokenLink("README.md", "docs/delivery.md#no-such-heading")).toMatch(/no heading/);
    expect(brokenLink("README.md", "docs/delivery.md#retry-after")).toBeUndefined();
    expect(brokenLink("README.md", "#webhook-cli-audience-sync")).toBeUndefined();
    expect(brokenLink("bench/README.md", "#on-nodejs-24")).toBeUndefined();
  });
});

describe("leftovers", () => {
  it.each(DOCS)("%s has no section markers and cites no issue numbers", (file) => {
    const text = read(file);
    expect(text).not.toMatch(/<!--\s*(section|end):/);
    expect(text.match(/\bissues? #?\d+/gi) ?? []).toEqual([]);
  });
});

describe("docs/cli.md's JSON events", () => {
  it("the table names every event a command writes, and no event no command writes", () => {
    const source = sourceFiles(join(ROOT, "src/cli")).map((file) => readFileSync(file, "utf8"));
    // output.event("name", …), and sign's objects written whole ({ event: "signed", … }).
    const written = new Set(source.flatMap((text) => [...text.matchAll(/\.event\("([A-Za-z]+)"|\{ event: "([A-Za-z]+)"/g)].map((m) => m[1] ?? m[2])));
    const section = read("docs/cli.md").split("## JSON events")[1]?.split("\n## ")[0] ?? "";
    // The rows under the table's head (`event` | written by | fields).
    const rows = section.split("\n").filter((line) => /^\| `/.test(line) && !line.startsWith("| `event` |"));
    const documented = new Set(rows.flatMap((row) => [...(row.split("|")[1] ?? "").matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1])));
    expect(written.size).toBeGreaterThan(15);
    expect([...written].filter((name) => !documented.has(name)).sort()).toEqual([]);
    expect([...documented].filter((name) => !written.has(name)).sort()).toEqual([]);
  });
});
