import { execFileSync, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { collect } from "../helpers/cli.js";

// The GitHub Action run as the runner runs it: from the repository as `uses: OWNER/webhook-cli@v1`
// downloads it (the tree of the tag a release made, with no node_modules and no dist/), each
// entry point a separate Node.js process with the INPUT_* variables (every input of action.yml,
// its default filled in), the GITHUB_OUTPUT, GITHUB_STATE and GITHUB_STEP_SUMMARY files, and
// post given main's state as STATE_* variables.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARTIFACTS = join(ROOT, "test/artifacts");
const SECRET = "action-e2e-secret";
// The tags a release makes (scripts/action-release.js): v<package.json's version>, and its major (`@v1`), which users write.
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const MAJOR = `v${VERSION.split(".")[0]}`;
const TRACK = JSON.stringify({ version: 1, type: "track", userId: "u1", event: "Signed Up", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const IDENTIFY = JSON.stringify({ version: 1, type: "identify", userId: "u2", traits: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

let base: string;
let repo: string;
let checkout: string;
let workspace: string;
let steps = 0;
const started: number[] = [];

const git = (cwd: string, ...args: string[]): string => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();
const node = (cwd: string, ...args: string[]) => execFileSync(process.execPath, args, { cwd, env: GIT_ENV, encoding: "utf8", stdio: "pipe" });

/** The tree of `ref` in `repo`, as the runner downloads an action: an archive, unpacked. */
function unpack(ref: string, into: string): string {
  mkdirSync(into, { recursive: true });
  const archive = `${into}.tar`;
  git(repo, "archive", "--format=tar", "-o", archive, ref);
  execFileSync("tar", ["-xf", archive, "-C", into]);
  return into;
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "webhook-cli-action-"));
  repo = join(base, "repo");
  workspace = join(base, "workspace");
  mkdirSync(join(workspace, "sub"), { recursive: true });
  // This repository as it would be committed now (.gitignore applied), then released as a maintainer does.
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT }).toString().split("\0");
  for (const file of files.filter((name) => name !== "" && existsSync(join(ROOT, name)))) {
    mkdirSync(dirname(join(repo, file)), { recursive: true });
    cpSync(join(ROOT, file), join(repo, file));
  }
  git(repo, "init", "--quiet", "--initial-branch=main");
  git(repo, "add", "--all");
  git(repo, "commit", "--quiet", "-m", "main");
  // The release builds with the maintainer's installed devDependencies (esbuild); they are not committed.
  symlinkSync(join(ROOT, "node_modules"), join(repo, "node_modules"));
  appendFileSync(join(repo, ".git/info/exclude"), "/node_modules\n");
  node(repo, "scripts/action-release.js", "release");
  checkout = unpack(MAJOR, join(base, "checkout"));
}, 120_000);

afterEach(() => {
  for (const pid of started.splice(0)) if (!gone(pid)) process.kill(pid, "SIGKILL");
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The inputs action.yml declares, with their defaults: the runner passes every one. */
function declaredInputs(action: string): Record<string, string> {
  const yml = readFileSync(join(action, "action.yml"), "utf8");
  const block = /^inputs:\n([\s\S]*?)^\S/m.exec(yml)?.[1] ?? "";
  const inputs: Record<string, string> = {};
  for (const [, name, body] of block.matchAll(/^ {2}([\w-]+):\n((?: {4}.*\n)*)/gm)) {
    inputs[name as string] = JSON.parse(/^ {4}default: (.*)$/m.exec(body ?? "")?.[1]?.replace(/^(\w+)$/, '"$1"') ?? '""') as string;
  }
  return inputs;
}

interface Step {
  code: number | null;
  stdout: string;
  outputs: Record<string, string>;
  state: Record<string, string>;
  summary: string;
}

/** Reads a GITHUB_OUTPUT / GITHUB_STATE file as the runner does (NAME=VALUE, or NAME<<DELIMITER lines DELIMITER). */
function fileCommands(file: string): Record<string, string> {
  const lines = readFileSync(file, "utf8").split(/\r?\n/);
  const values: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const heredoc = /^([^=]+?)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2] as string, i + 1);
      expect(end, `no closing delimiter for ${heredoc[1]}`).toBeGreaterThan(i);
      values[heredoc[1] as string] = lines.slice(i + 1, end).join("\n");
      i = end;
    } else if (line.includes("=")) values[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
  }
  return values;
}

/** One step of the action, `main` or `post`, in its own process, as the runner starts it (cwd: the workspace). */
async function runStep(action: string, step: "main" | "post", inputs: Record<string, string>, state: Record<string, string> = {}): Promise<Step> {
  const dir = join(base, `step-${++steps}`);
  mkdirSync(dir);
  const files = { GITHUB_OUTPUT: join(dir, "output"), GITHUB_STATE: join(dir, "state"), GITHUB_STEP_SUMMARY: join(dir, "summary") };
  for (const file of Object.values(files)) writeFileSync(file, "");
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "",
    HOME: base,
    RUNNER_TEMP: join(base, "runner-temp"),
    GITHUB_WORKSPACE: workspace,
    ...files,
  };
  mkdirSync(env["RUNNER_TEMP"] as string, { recursive: true });
  for (const [name, value] of Object.entries({ ...declaredInputs(action), ...inputs })) env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] = value;
  for (const [name, value] of Object.entries(state)) env[`STATE_${name}`] = value;
  const child = spawn(process.execPath, [join(action, "action", `${step}.js`)], { cwd: workspace, env, stdio: ["ignore", "pipe", "pipe"] });
  const result = await collect(child, 20_000);
  const saved = fileCommands(files.GITHUB_STATE);
  if (saved["pid"]) started.push(Number(saved["pid"]));
  expect(result.stderr).toBe("");
  return {
    code: result.code,
    stdout: result.stdout,
    outputs: fileCommands(files.GITHUB_OUTPUT),
    state: saved,
    summary: readFileSync(files.GITHUB_STEP_SUMMARY, "utf8"),
  };
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  await response.body.dump();
  return response.statusCode;
}
const signed = (body: string) => ({ "x-signature": createHmac("sha1", SECRET).update(body).digest("hex") });

/** Gone, or a zombie nobody reaps (the orphan of main, in a container without an init). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  return existsSync(`/proc/${pid}/stat`) && /\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

function keep(name: string, summary: string): void {
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, name), summary);
}

describe("the GitHub Action at a release tag", () => {
  it("the release commit holds the bundle; the checkout has no node_modules and no dist/", () => {
    expect(existsSync(join(checkout, "action/cli/webhook-cli.js"))).toBe(true);
    expect(existsSync(join(checkout, "action/inspector/assets/index.html"))).toBe(true);
    expect(existsSync(join(checkout, "node_modules"))).toBe(false);
    expect(existsSync(join(checkout, "dist"))).toBe(false);
    expect(declaredInputs(checkout)).toEqual({
      command: "listen",
      secret: "",
      args: "",
      "expect-count": "1",
      "fail-on-invalid": "true",
      "working-directory": ".",
      summary: "true",
    });
    const yml = readFileSync(join(checkout, "action.yml"), "utf8");
    expect(yml).toMatch(/^ {2}using: node24\n {2}main: action\/main\.js\n {2}post: action\/post\.js$/m);
    // main has no bundle: its history stays free of built files.
    expect(git(repo, "ls-tree", "-r", "--name-only", "main", "action")).not.toContain("action/cli/");
    expect(git(repo, "rev-parse", `${MAJOR}^{commit}`)).toBe(git(repo, "rev-parse", `v${VERSION}^{commit}`));
    // The major tag is the one the docs tell users to write.
    expect(MAJOR).toBe("v1");
    expect(readFileSync(join(ROOT, "docs/guides/ci.md"), "utf8")).toContain(`uses: OWNER/webhook-cli@${MAJOR}`);
  });

  it("passes: valid requests, expect-count met; url and control-url work; listen is stopped; the secret shows nowhere", async () => {
    const inputs = { secret: SECRET, "expect-count": "2", args: "--record received.ndjson", "working-directory": "sub" };
    const main = await runStep(checkout, "main", inputs);
    expect(main.code, main.stdout).toBe(0);
    expect(main.stdout).toContain(`::add-mask::${SECRET}`);
    const { url, "control-url": control } = main.outputs;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await post(`${url}/hook`, TRACK, signed(TRACK))).toBe(200);
    expect(await post(`${url}/hook`, IDENTIFY, signed(IDENTIFY))).toBe(200);
    const received = await request(`${control}/api/received?type=track`);
    expect(await received.body.json()).toMatchObject({ received: 2, matched: 1 });

    const after = await runStep(checkout, "post", inputs, main.state);
    keep("action-summary-passing.md", after.summary);
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).not.toContain("::error::");
    expect(after.summary).toMatch(/^### ✅ webhook-cli listen: 2 requests, all valid\n/);
    expect(after.summary).toContain("| identify | 1 | 0 |\n| track | 1 | 0 |\n| **all** | **2** | **0** |");
    expect(gone(Number(main.state["pid"]))).toBe(true);
    // --record resolved from working-directory, written by the stopped listen.
    expect(readFileSync(join(workspace, "sub/received.ndjson"), "utf8").trim().split("\n")).toHaveLength(2);
    expect(`${main.stdout.replace(`::add-mask::${SECRET}`, "")}${after.stdout}${after.summary}`).not.toContain(SECRET);
  });

  it("fails: a bad signature and fewer requests than expected; the summary lists the invalid one first with its reason", async () => {
    const inputs = { secret: SECRET, "expect-count": "3" };
    const main = await runStep(checkout, "main", inputs);
    const url = main.outputs["url"];
    expect(await post(`${url}/orders`, TRACK, signed(TRACK))).toBe(200);
    const forged = JSON.stringify({ ...JSON.parse(IDENTIFY), userId: "<img src=x onerror=alert(1)> | **x**" });
    expect(await post(`${url}/orders`, forged, { "x-signature": createHmac("sha256", SECRET).update(forged).digest("hex") })).toBe(401);

    const after = await runStep(checkout, "post", inputs, main.state);
    keep("action-summary-failing.md", after.summary);
    expect(after.code).toBe(1);
    expect(after.stdout).toContain("::error::1 request was invalid (fail-on-invalid)\n");
    expect(after.stdout).toContain("::error::2 requests arrived; expect-count is 3\n");
    expect(after.summary).toMatch(/^### ❌ webhook-cli listen: 2 requests, 1 invalid\n/);
    const invalid = after.summary.indexOf("#### Invalid requests (1)");
    expect(invalid).toBeGreaterThan(0);
    expect(invalid).toBeLessThan(after.summary.indexOf("Valid requests (1)"));
    expect(after.summary).toContain(
      "| 2 | POST \\/orders | identify | &lt;img src\\=x onerror\\=alert\\(1\\)&gt; \\| \\*\\*x\\*\\* | — | " +
        "X\\-Signature does not match the body \\(likely cause\\: signed with HMAC\\-SHA256 instead of HMAC\\-SHA1\\) |",
    );
    expect(gone(Number(main.state["pid"]))).toBe(true);
  });

  it("fail-on-invalid false: an invalid request is listed, the job passes", async () => {
    const inputs = { secret: SECRET, "fail-on-invalid": "false" };
    const main = await runStep(checkout, "main", inputs);
    expect(await post(`${main.outputs["url"]}/hook`, TRACK, { "x-signature": "0".repeat(40) })).toBe(401);
    const after = await runStep(checkout, "post", inputs, main.state);
    expect(after.code, after.stdout).toBe(0);
    expect(after.summary).toMatch(/^### ✅ webhook-cli listen: 1 request, 1 invalid\n/);
    expect(after.summary).toContain("#### Invalid requests (1)");
  });

  it("listen stopped on its own (--count): post reads its run without signalling anything", async () => {
    const inputs = { secret: SECRET, args: "--count 1" };
    const main = await runStep(checkout, "main", inputs);
    expect(await post(`${main.outputs["url"]}/hook`, TRACK, signed(TRACK))).toBe(200);
    const after = await runStep(checkout, "post", inputs, main.state);
    expect(after.code, after.stdout).toBe(0);
    expect(after.summary).toMatch(/^### ✅ webhook-cli listen: 1 request, all valid\n/);
  });

  it("nothing arrived: expect-count 1 (the default) fails the job", async () => {
    const main = await runStep(checkout, "main", {});
    const after = await runStep(checkout, "post", {}, main.state);
    expect(after.code).toBe(1);
    expect(after.stdout).toContain("::error::0 requests arrived; expect-count is 1\n");
    expect(after.summary).toMatch(/^### ❌ webhook-cli listen: nothing arrived\n/);
  });

  it("listen killed before post: no summary, so the job fails whatever arrived", async () => {
    const main = await runStep(checkout, "main", { "expect-count": "0" });
    process.kill(Number(main.state["pid"]), "SIGKILL");
    const after = await runStep(checkout, "post", { "expect-count": "0" }, main.state);
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(/^webhook-cli \(pid \d+\) had already ended$/m);
    expect(after.stdout).toContain("::error::webhook-cli listen stopped without its summary (it was killed or crashed): see its log above\n");
    expect(after.summary).toMatch(/^### ❌ webhook-cli listen: no summary \(0 requests seen\)\n/);
  });

  it("serve: a call with a wrong write key is refused and fails the job; the accepted one counts", async () => {
    const inputs = { command: "serve", args: "--memory --write-key wk_ci" };
    const main = await runStep(checkout, "main", inputs);
    expect(main.code, main.stdout).toBe(0);
    expect(main.outputs["control-url"]).toBe("");
    const call = JSON.stringify({ userId: "u1", event: "Signed Up" });
    const auth = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString("base64")}` });
    expect(await post(`${main.outputs["url"]}/v1/track`, call, auth("wk_ci"))).toBe(200);
    expect(await post(`${main.outputs["url"]}/v1/track`, call, auth("wk_wrong"))).toBe(401);
    const after = await runStep(checkout, "post", inputs, main.state);
    expect(after.code).toBe(1);
    expect(after.stdout).toContain("::error::1 call was rejected or refused (fail-on-invalid)\n");
    expect(after.summary).toMatch(/^### ❌ webhook-cli serve: 1 call accepted, 0 delivered, 0 given up\n/);
    expect(after.summary).toMatch(/\| refused \(401\) \| \\\/v1\\\/track from .+ \| .+ \|/);
  });

  it("bad args: main fails with the command's own error and starts nothing; post has nothing to stop", async () => {
    const inputs = { args: "--port nope" };
    const main = await runStep(checkout, "main", inputs);
    expect(main.code).toBe(1);
    expect(main.stdout).toMatch(/^::error::webhook-cli exited \(status 2\) before it was ready:.*--port/m);
    expect(main.state).toEqual({});
    const after = await runStep(checkout, "post", inputs, main.state);
    expect(after.code).toBe(0);
    expect(after.summary).toBe("");
  });

  it("a built checkout (uses: ./ after npm ci and npm run build) runs its own build", async () => {
    expect(existsSync(join(ROOT, "dist/cli/main.js")), "npm run build first").toBe(true);
    const built = unpack("main", join(base, "built"));
    symlinkSync(join(ROOT, "node_modules"), join(built, "node_modules"));
    symlinkSync(join(ROOT, "dist"), join(built, "dist"));
    const main = await runStep(built, "main", { "expect-count": "0" });
    expect(main.code, main.stdout).toBe(0);
    const pid = Number(main.state["pid"]);
    if (existsSync(`/proc/${pid}/cmdline`)) expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain(join(built, "bin/webhook-cli.js"));
    const after = await runStep(built, "post", { "expect-count": "0" }, main.state);
    expect(after.code, after.stdout).toBe(0);
    expect(after.summary).toMatch(/^### ✅ webhook-cli listen: nothing arrived\n/);
  });

  it("a commit without the bundle (not a release) says to use a release tag", async () => {
    const untagged = unpack("main", join(base, "untagged"));
    const main = await runStep(untagged, "main", {});
    expect(main.code).toBe(1);
    expect(main.stdout).toMatch(/^::error::this commit of webhook-cli holds no bundled command line \(action\/cli\/\): use a release tag/m);
  });
});

describe("the workflow in docs/guides/ci.md#the-github-action", () => {
  const guide = readFileSync(join(ROOT, "docs/guides/ci.md"), "utf8");
  const workflow = /## The GitHub Action\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(guide)?.[1] ?? "";
  /** `${{ steps.receiver.outputs.NAME }}` and `${{ secrets.NAME }}` as the runner would expand them. */
  const expand = (text: string, outputs: Record<string, string>): string =>
    text
      .replace(/\$\{\{ steps\.receiver\.outputs\.([\w-]+) \}\}/g, (_, name: string) => outputs[name] ?? "")
      .replace(/\$\{\{ secrets\.WEBHOOK_SECRET \}\}/g, SECRET);

  it("runs as written: the action's inputs, the URL for the sender, the wait on the control API, then the post step", async () => {
    const step = /^ {6}- id: receiver\n {8}uses: OWNER\/webhook-cli@v1\n {8}with:\n((?: {10}.*\n)+)/m.exec(workflow)?.[1] ?? "";
    const inputs = Object.fromEntries([...step.matchAll(/^ {10}([\w-]+): (.*)$/gm)].map(([, name, value]) => [name as string, expand(value as string, {})]));
    expect(inputs).toEqual({ secret: SECRET, "expect-count": "3", args: "--record received.ndjson" });
    const main = await runStep(checkout, "main", inputs);
    expect(main.code, main.stdout).toBe(0);
    const url = expand(/WEBHOOK_URL: (.*)$/m.exec(workflow)?.[1] ?? "", main.outputs);
    expect(url).toBe(`${main.outputs["url"]}/webhooks`);
    const wait = expand(/^ {8}run: (curl .*)$/m.exec(workflow)?.[1] ?? "", main.outputs);
    const bash = (line: string) => execFileSync("bash", ["-c", line], { stdio: "pipe" });
    for (const body of [TRACK, IDENTIFY]) expect(await post(url, body, signed(body))).toBe(200);
    // Two of three: the wait ends at its timeout (shortened here from 30s) and fails the step.
    expect(() => bash(wait.replace("timeout=30s", "timeout=1s"))).toThrow();
    expect(await post(url, TRACK, signed(TRACK))).toBe(200);
    bash(wait);
    const after = await runStep(checkout, "post", inputs, main.state);
    expect(after.code, after.stdout).toBe(0);
    expect(after.summary).toMatch(/^### ✅ webhook-cli listen: 3 requests, all valid\n/);
    expect(readFileSync(join(workspace, "received.ndjson"), "utf8").trim().split("\n")).toHaveLength(3);
  });
});

describe("scripts/action-release.js", () => {
  it("check passes at the tag and fails once a source changes; release refuses a changed work tree", () => {
    git(repo, "checkout", "--quiet", MAJOR);
    expect(node(repo, "scripts/action-release.js", "check")).toContain("the bundle is what this commit's sources build");
    const listen = join(repo, "src/cli/commands/listen/index.ts");
    writeFileSync(listen, readFileSync(listen, "utf8").replaceAll("Listening on", "Now listening on"));
    expect(() => node(repo, "scripts/action-release.js", "check")).toThrow(/not what this commit's sources build \(action\/cli\/webhook-cli\.js\)/);
    expect(() => node(repo, "scripts/action-release.js", "release")).toThrow(/the work tree has changes/);
  });
});
