import { describe, expect, it } from "vitest";
import { relaunchPlan, SEMI_SPACE_FLAG, type ProcessFacts } from "../../src/cli/shell/relaunch.js";

const facts = (argv: string[], more: Partial<ProcessFacts> = {}): ProcessFacts => ({
  argv: ["/usr/bin/node", "/pkg/bin/webhook-cli.js", ...argv],
  execArgv: [],
  nodeOptions: undefined,
  platform: "linux",
  canExecve: true,
  sea: false,
  ...more,
});

describe("replay's relaunch with a smaller young generation (src/cli/shell/relaunch.ts)", () => {
  it("starts replay again with the flag first, then Node's own flags, the script and the arguments unchanged", () => {
    expect(relaunchPlan(facts(["replay", "log.ndjson", "--url", "http://x/"], { execArgv: ["--enable-source-maps"] }))).toEqual({
      argv: ["/usr/bin/node", SEMI_SPACE_FLAG, "--enable-source-maps", "/pkg/bin/webhook-cli.js", "replay", "log.ndjson", "--url", "http://x/"],
    });
    expect(relaunchPlan(facts(["--no-color", "replay", "-"]))?.argv.slice(-3)).toEqual(["--no-color", "replay", "-"]);
  });

  it("leaves every other command, and a run without a command, as it is", () => {
    for (const argv of [["send", "replay"], ["listen"], ["generate"], ["--help"], [], ["--version"]]) expect(relaunchPlan(facts(argv))).toBeUndefined();
  });

  it("never where process.execve is missing (Node.js 22.13, 22.14) or on Windows, nor when the user set the size", () => {
    expect(relaunchPlan(facts(["replay", "f"], { canExecve: false }))).toBeUndefined();
    expect(relaunchPlan(facts(["replay", "f"], { platform: "win32" }))).toBeUndefined();
    expect(relaunchPlan(facts(["replay", "f"], { execArgv: ["--max-semi-space-size=64"] }))).toBeUndefined();
    expect(relaunchPlan(facts(["replay", "f"], { nodeOptions: "--max-old-space-size=512 --max_semi_space_size=8" }))).toBeUndefined();
    // Its own flag is on the command line after the relaunch: it does not start again.
    expect(relaunchPlan(facts(["replay", "f"], { execArgv: [SEMI_SPACE_FLAG] }))).toBeUndefined();
    // Another flag whose name merely starts alike does not count.
    expect(relaunchPlan(facts(["replay", "f"], { nodeOptions: "--max-semi-space-size-x" }))).toBeDefined();
  });

  it("as a single executable: the same arguments, the name it was started by first, and the flag added to NODE_OPTIONS", () => {
    const sea = (argv: string[], nodeOptions?: string): ProcessFacts =>
      facts(argv, { argv: ["/opt/webhook-cli", "./webhook-cli", ...argv], sea: true, nodeOptions });
    expect(relaunchPlan(sea(["replay", "log.ndjson", "--json"]))).toEqual({
      argv: ["./webhook-cli", "replay", "log.ndjson", "--json"],
      nodeOptions: SEMI_SPACE_FLAG,
    });
    expect(relaunchPlan(sea(["replay", "-"], "--max-old-space-size=512"))?.nodeOptions).toBe(`--max-old-space-size=512 ${SEMI_SPACE_FLAG}`);
    // Started again, it finds its flag in NODE_OPTIONS and goes on.
    expect(relaunchPlan(sea(["replay", "-"], SEMI_SPACE_FLAG))).toBeUndefined();
    expect(relaunchPlan(sea(["listen"]))).toBeUndefined();
  });
});
