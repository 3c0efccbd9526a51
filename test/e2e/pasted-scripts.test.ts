import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { markdownFiles } from "../helpers/markdown.js";
import { backgroundBlocks, runScript, scriptBlocks, workflowScripts, type ScriptBlock, type WorkflowScript } from "../helpers/pasted-scripts.js";
import { tempDir } from "../helpers/setup.js";

/*
 * The snippets that start a process in the background (`&`), run whole, exactly as written: a
 * ```sh script block as pasted into a terminal (bash, each command's status noted), a workflow's
 * `run: |` script as GitHub's runner runs it (`bash -e`, the step's `env:`), each with its failure
 * path. Line-by-line examples are test/e2e/readme.test.ts's.
 *
 * `webhook-cli` is on PATH as a global install puts it (a link to bin/webhook-cli.js). A workflow
 * runs in a project whose node_modules holds the package as `npm ci` installs it (bin/ and dist/
 * linked, fixtures/ copied so a test may change them), and `npx webhook-cli` is the real npx,
 * offline (it finds the local bin, and could never fetch a package of that name instead).
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FILES = ["README.md", ...markdownFiles(join(ROOT, "docs")).map((file) => relative(ROOT, file))];
const read = (file: string): string => readFileSync(join(ROOT, file), "utf8");
const scripts = FILES.flatMap((file) => scriptBlocks(read(file), file));
const jobs = FILES.flatMap((file) => workflowScripts(read(file), file));
const { dir } = tempDir("webhook-cli-pasted-");
const SECRET = "s3cret";
let runs = 0;

/** The environment of this process without npm's own variables (a test run under `npm test` has them; a runner has not). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== "INIT_CWD" && name !== "WEBHOOK_SECRET"));
}

/** A fresh directory for a terminal snippet: `.secret` and the fixtures, `webhook-cli` on PATH, an empty home. */
function terminal(options: { secret: boolean }): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = join(dir, `terminal-${runs++}`);
  mkdirSync(join(cwd, "home"), { recursive: true });
  mkdirSync(join(cwd, ".bin"));
  symlinkSync(BIN, join(cwd, ".bin", "webhook-cli"));
  cpSync(join(ROOT, "fixtures"), join(cwd, "fixtures"), { recursive: true });
  if (options.secret) writeFileSync(join(cwd, ".secret"), `${SECRET}\n`);
  const env = cleanEnv();
  return { cwd, env: { ...env, NO_COLOR: "1", HOME: join(cwd, "home"), PATH: `${join(cwd, ".bin")}:${env["PATH"] ?? ""}` } };
}

/** A checked-out project after `npm ci`, with webhook-cli installed, and the runner's environment plus the step's `env:`. */
function project(job: WorkflowScript): { cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = join(dir, `project-${runs++}`);
  const installed = join(cwd, "node_modules", "webhook-cli");
  mkdirSync(join(cwd, "node_modules", ".bin"), { recursive: true });
  mkdirSync(installed);
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "app", private: true, devDependencies: { "webhook-cli": "^1.0.0" } }));
  for (const name of ["package.json", "bin", "dist"]) symlinkSync(join(ROOT, name), join(installed, name));
  cpSync(join(ROOT, "fixtures"), join(installed, "fixtures"), { recursive: true });
  symlinkSync("../webhook-cli/bin/webhook-cli.js", join(cwd, "node_modules", ".bin", "webhook-cli"));
  const runner = { CI: "true", GITHUB_ACTIONS: "true", HOME: join(cwd, ".home"), npm_config_offline: "true", npm_config_update_notifier: "false" };
  return { cwd, env: { ...cleanEnv(), ...runner, ...job.env } };
}

const name = (snippet: ScriptBlock | WorkflowScript): string => `${snippet.file}:${snippet.line}`;

/** What a snippet that runs a command shows when it worked, beside listen's readiness line. */
const SHOWN: readonly (readonly [RegExp, RegExp])[] = [
  [/webhook-cli expect --from listen\.url --type track/, /✓ 1 request since listen started matching \{type: "track", event: "Order Completed"\}/],
  [/webhook-cli function run \S+ --type track/, /^✓ onTrack: .* → delivered/m],
  [/--function-egress "\$\(head -1 listen\.url\)/, /→ 200 \(\d+ms, sent to http:\/\/127\.0\.0\.1:\d+\/slack\)/],
];

/** What a failing command of the block is, by the script line the shell named. */
function failures(block: ScriptBlock, failed: readonly { line: number; status: number }[]): { command: string; status: number }[] {
  return failed.map(({ line, status }) => ({ command: block.commands.find((command) => command.line === line)?.command ?? `line ${line}`, status }));
}

describe("snippets that start a background process run as pasted", { tags: ["smoke"] }, () => {
  it("every snippet that sends a command to the background is a ```sh script block or a workflow, and those are run here", () => {
    const background = FILES.flatMap((file) => backgroundBlocks(read(file), file));
    expect(background.filter((block) => block.info !== "sh script" && block.info !== "yaml")).toEqual([]);
    // (The README's expect example and CI job, and their pages' versions, are among them.)
    expect(scripts.map((block) => block.file)).toEqual(expect.arrayContaining(["README.md", "docs/commands/expect.md"]));
    expect(jobs.map((job) => job.file)).toEqual(expect.arrayContaining(["README.md", "docs/guides/ci.md"]));
    for (const job of jobs) expect(job.env).toEqual({ WEBHOOK_SECRET: "ci-secret" });
  });

  it.each(scripts.map((block) => [name(block), block] as const))("%s, pasted into a terminal: each command exits as documented", async (_, block) => {
    const result = await runScript(block.text, terminal({ secret: true }));
    const expected = block.commands.filter((command) => command.expected !== 0).map(({ command, expected }) => ({ command, status: expected }));
    expect({ failed: failures(block, result.failed), stderr: result.stderr }).toEqual({ failed: expected, stderr: expect.any(String) });
    expect(result.stdout).toMatch(/✓ listen is ready: http:\/\/127\.0\.0\.1:\d+ /);
    for (const [command, shown] of SHOWN) if (command.test(block.text)) expect(result.stdout).toMatch(shown);
  });

  it.each(scripts.map((block) => [name(block), block] as const))(
    "%s, pasted where listen cannot start (its ready file cannot be written): the readiness line fails at once, saying listen exited",
    async (_, block) => {
      const where = terminal({ secret: true });
      mkdirSync(join(where.cwd, "listen.url"));
      const result = await runScript(block.text, where);
      const ready = block.commands.find((command) => /\s--ready(\s|$)/.test(command.command)) as ScriptBlock["commands"][number];
      expect(failures(block, result.failed)[0]).toEqual({ command: ready.command, status: 2 });
      expect(result.stderr).toMatch(/^error: listen\.url: --from: not a regular file/m);
      expect(result.stderr).toMatch(/^error: listen\.url: --ready-file: cannot write/m);
    },
  );

  it.each(scripts.filter((block) => block.text.includes("--secret-file .secret")).map((block) => [name(block), block] as const))(
    "%s, pasted where listen cannot start (no .secret yet): the readiness line fails at once, saying listen exited",
    async (_, block) => {
      const result = await runScript(block.text, terminal({ secret: false }));
      const ready = block.commands.find((command) => /\s--ready(\s|$)/.test(command.command)) as ScriptBlock["commands"][number];
      expect(failures(block, result.failed)[0]).toEqual({ command: ready.command, status: 2 });
      expect(result.stderr).toMatch(/error: \.secret: --secret-file: cannot read: no such file \(ENOENT\)$/m);
      expect(result.stderr).toMatch(/error: --pid: listen \(pid \d+\) exited before it was ready/);
      expect(result.code).not.toBe(0);
    },
  );

  it.each(jobs.map((job) => [name(job), job] as const))("%s workflow step, under bash -e: passes, with listen's verdict", async (_, job) => {
    const { cwd, env } = project(job);
    const result = await runScript(job.text, { cwd, env, errexit: true });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(result.stdout).toContain("Summary: 7 requests, 7 valid, 0 invalid");
    expect(readFileSync(join(cwd, "listen.xml"), "utf8")).toMatch(/<testsuite [^>]*tests="7" failures="0"/);
    expect(existsSync(join(cwd, "replay.xml"))).toBe(true);
  });

  it.each(jobs.map((job) => [name(job), job] as const))(
    "%s workflow step: fails when listen does, though the replay succeeded (fewer requests from it, and one with a bad signature)",
    async (_, job) => {
      const { cwd, env } = project(job);
      // The recording loses its last request, and another sender signs with the wrong secret once replay is done.
      const recording = join(cwd, "node_modules/webhook-cli/fixtures/events.ndjson");
      writeFileSync(recording, `${readFileSync(recording, "utf8").trimEnd().split("\n").slice(0, -1).join("\n")}\n`);
      const run = runScript(job.text, { cwd, env, errexit: true });
      let ended = false;
      void run.finally(() => (ended = true));
      await expect.poll(() => existsSync(join(cwd, "replay.xml")) || ended, { timeout: 25_000 }).toBe(true);
      const url = readFileSync(join(cwd, "listen.url"), "utf8").split("\n")[0] as string;
      const stray = await fetch(`${url}/hook`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-signature": "0".repeat(40) },
        body: readFileSync(join(ROOT, "fixtures/track.json")),
      });
      expect(stray.status).toBe(401);
      const result = await run;
      expect(result.stdout).toMatch(/^6 messages: 6 delivered, 0 failed, 0 retried$/m);
      expect(result.stdout).toContain("Summary: 7 requests, 6 valid, 1 invalid");
      expect(result.code).toBe(1);
    },
  );

  it("docs/guides/ci.md's workflow step: fails at once when listen cannot start, before anything is sent", async () => {
    const job = jobs.find((candidate) => candidate.file === "docs/guides/ci.md") as WorkflowScript;
    const { cwd, env } = project(job);
    // Where listen records is not a file it can append to.
    mkdirSync(join(cwd, "received.ndjson"));
    const result = await runScript(job.text, { cwd, env, errexit: true });
    expect(result.stderr).toMatch(/received\.ndjson: --record: cannot open/);
    expect(result.stderr).toMatch(/error: --pid: listen \(pid \d+\) exited before it was ready/);
    expect(result.code).toBe(2);
    expect(existsSync(join(cwd, "replay.xml"))).toBe(false);
  });
});
