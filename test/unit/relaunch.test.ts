import { describe, expect, it } from "vitest";
import { relaunchArgs, SEMI_SPACE_FLAG, type ProcessFacts } from "../../src/cli/relaunch.js";

const facts = (argv: string[], more: Partial<ProcessFacts> = {}): ProcessFacts => ({
  argv: ["/usr/bin/node", "/pkg/bin/webhook-cli.js", ...argv],
  execArgv: [],
  nodeOptions: undefined,
  platform: "linux",
  canExecve: true,
  ...more,
});

describe("replay's relaunch with a smaller young generation (src/cli/relaunch.ts)", () => {
  it("starts replay again with the flag first, then Node's own flags, the script and the arguments unchanged", () => {
    expect(relaunchArgs(facts(["replay", "log.ndjson", "--url", "http://x/"], { execArgv: ["--enable-source-maps"] }))).toEqual([
      SEMI_SPACE_FLAG,
      "--enable-source-maps",
      "/pkg/bin/webhook-cli.js",
      "replay",
      "log.ndjson",
      "--url",
      "http://x/",
    ]);
    expect(relaunchArgs(facts(["--no-color", "replay", "-"]))?.slice(-3)).toEqual(["--no-color", "replay", "-"]);
  });

  it("leaves every other command, and a run without a command, as it is", () => {
    for (const argv of [["send", "replay"], ["listen"], ["generate"], ["--help"], [], ["--version"]]) expect(relaunchArgs(facts(argv))).toBeUndefined();
  });

  it("never where process.execve is missing (Node.js 20) or on Windows, nor when the user set the size", () => {
    expect(relaunchArgs(facts(["replay", "f"], { canExecve: false }))).toBeUndefined();
    expect(relaunchArgs(facts(["replay", "f"], { platform: "win32" }))).toBeUndefined();
    expect(relaunchArgs(facts(["replay", "f"], { execArgv: ["--max-semi-space-size=64"] }))).toBeUndefined();
    expect(relaunchArgs(facts(["replay", "f"], { nodeOptions: "--max-old-space-size=512 --max_semi_space_size=8" }))).toBeUndefined();
    // Its own flag is on the command line after the relaunch: it does not start again.
    expect(relaunchArgs(facts(["replay", "f"], { execArgv: [SEMI_SPACE_FLAG] }))).toBeUndefined();
    // Another flag whose name merely starts alike does not count.
    expect(relaunchArgs(facts(["replay", "f"], { nodeOptions: "--max-semi-space-size-x" }))).toBeDefined();
  });
});
