import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { runInProcess } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// demo's "Next:" names commands that run where the demo ran: each is tried there, as the user would.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const { dir } = tempDir("webhook-cli-demo-next-");
const global = join(dir, "global-bin");
mkdirSync(global);
symlinkSync(BIN, join(global, "webhook-cli"));

/** This process's environment without npm's variables (a test run by `npm test` has them) and with `path` as PATH. */
function shellEnv(path: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== "INIT_CWD"));
  return { ...env, NO_COLOR: "1", PATH: path, HOME: dir, npm_config_offline: "true", npm_config_update_notifier: "false" };
}

/** The command the hint's `listen` line starts with. */
function hinted(stdout: string): string {
  const next = stdout.slice(stdout.indexOf("Next:"));
  return (/^ {2}(.+) listen$/m.exec(next) as RegExpExecArray)[1] as string;
}

/** Runs `command --version` in bash, in `cwd`: the hint's command works there when this prints the version. */
function version(command: string, cwd: string, env: NodeJS.ProcessEnv): string {
  return execFileSync("bash", ["--noprofile", "--norc", "-c", `${command} --version`], { cwd, env, encoding: "utf8" });
}

describe("demo's Next: hint", { tags: ["smoke"] }, () => {
  it("in a clone, run through npm (npx webhook-cli demo): it says npx webhook-cli, which works there", () => {
    const env = shellEnv(process.env["PATH"] ?? "");
    const stdout = execFileSync("bash", ["--noprofile", "--norc", "-c", "npx webhook-cli demo"], { cwd: ROOT, env, encoding: "utf8" });
    expect(hinted(stdout)).toBe("npx webhook-cli");
    expect(version(hinted(stdout), ROOT, env)).toBe(`${VERSION}\n`);
    expect(stdout).toContain("  npx webhook-cli send --type track --url http://127.0.0.1:8080/hook\n");
  }, 60_000);

  it("installed globally (webhook-cli on PATH): it says webhook-cli; under an npm script, npx webhook-cli", async () => {
    const path = `${global}:${process.env["PATH"] ?? ""}`;
    const onPath = await runInProcess(["demo"], { env: { PATH: path } });
    expect(hinted(onPath.stdout)).toBe("webhook-cli");
    expect(version("webhook-cli", dir, shellEnv(path))).toBe(`${VERSION}\n`);
    // npm run puts node_modules/.bin on PATH for its scripts only: the user's shell does not find webhook-cli there.
    const underNpm = await runInProcess(["demo"], { env: { PATH: path, npm_lifecycle_event: "demo", npm_command: "run-script" } });
    expect(hinted(underNpm.stdout)).toBe("npx webhook-cli");
  });
});
