import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { tempDir } from "../helpers/setup.js";

const PACKAGE_JSON = new URL("../../package.json", import.meta.url);
const { engines } = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { engines: { node: string } };
// package.json says ">=22.13.0"; the entry (bin/webhook-cli.js) says "22.13".
const NEEDED = engines.node.replace(/^>=/, "").replace(/\.0$/, "");
const refusal = (version: string) => `error: webhook-cli needs Node.js ${NEEDED} or later; this is Node.js ${version}\n`;

/** The first Node.js older than 22 found on PATH or where Debian and installers put it (this machine's own is 20). */
function olderNode(): { path: string; version: string } | undefined {
  const candidates = [...(process.env["PATH"] ?? "").split(delimiter).map((dir) => join(dir, "node")), "/usr/bin/node", "/usr/local/bin/node"];
  for (const path of new Set(candidates)) {
    const version = spawnSync(path, ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
    if (/^v\d+\./.test(version) && Number(version.slice(1).split(".")[0]) < 22) return { path, version };
  }
  return undefined;
}

const old = olderNode();
const NO_OLD_NODE = "no Node.js older than 22 here (looked on PATH, /usr/bin/node, /usr/local/bin/node): the refusal is checked on faked versions only";

/** Runs the entry; `timeout` ends a command that started for real instead of refusing (serve, listen). */
const run = (node: string, args: string[], options: { cwd?: string; entry?: string; execArgv?: string[] } = {}) =>
  spawnSync(node, [...(options.execArgv ?? []), options.entry ?? BIN, ...args], {
    encoding: "utf8",
    timeout: 10_000,
    cwd: options.cwd,
    env: { ...process.env, NODE_OPTIONS: "" },
  });

describe(`the Node.js it needs (${engines.node})`, { tags: ["smoke"] }, () => {
  const { dir } = tempDir("webhook-cli-node-version-");

  it("on an older Node.js (this machine's 20), every command exits 2 at once with one line naming the Node.js it needs", (context) => {
    if (old === undefined) return context.skip(NO_OLD_NODE);
    for (const args of [
      [],
      ["--version"],
      ["--help"],
      ["generate", "track"],
      ["send", "--type", "track"],
      ["listen", "--port", "0"],
      ["serve", "--port", "0"],
      ["demo"],
    ]) {
      const result = run(old.path, args, { cwd: dir });
      expect({ args, status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
        args,
        status: 2,
        stdout: "",
        stderr: refusal(old.version),
      });
    }
  });

  it("it refuses before loading anything else: the entry alone, with no dist/ and no node_modules beside it", (context) => {
    if (old === undefined) return context.skip(NO_OLD_NODE);
    const alone = join(dir, "alone");
    mkdirSync(join(alone, "bin"), { recursive: true });
    copyFileSync(PACKAGE_JSON, join(alone, "package.json"));
    copyFileSync(BIN, join(alone, "bin/webhook-cli.js"));
    const result = run(old.path, ["serve"], { cwd: alone, entry: join(alone, "bin/webhook-cli.js") });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 2, stderr: refusal(old.version) });
  });

  // The running Node.js made to report another version before the entry reads it.
  const posingAs = (version: string) => [
    "--import",
    `data:text/javascript,Object.defineProperty(process, "versions", { value: { ...process.versions, node: "${version}" } }); Object.defineProperty(process, "version", { value: "v${version}" });`,
  ];

  it.each([
    ["21.7.3", 2],
    ["22.12.0", 2],
    [`${NEEDED}.0`, 0],
    ["23.0.0", 0],
  ])("as Node.js %s: exit %i", (version, status) => {
    const result = run(process.execPath, ["--version"], { execArgv: posingAs(version) });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status, stderr: status === 2 ? refusal(`v${version}`) : "" });
    expect(result.stdout).toMatch(status === 2 ? /^$/ : /^\d+\.\d+\.\d+\n$/);
  });
});
