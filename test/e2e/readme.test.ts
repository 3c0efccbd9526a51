import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, collect, spawnCli, waitForLine, type CliResult } from "../helpers/cli.js";
import { startServer as startApp, type TestServer } from "../helpers/http-server.js";
import { markdownFiles } from "../helpers/markdown.js";
import { asServer, documentedPort, expectedExit, planRuns, runnableBlocks, type PlannedBlock } from "../helpers/readme.js";
import { tempDir } from "../helpers/setup.js";
import { generateCertificates } from "../helpers/tls.js";

/*
 * Every block marked ```sh runnable in README.md and in docs/ (guides and
 * command pages included) is run here, line by line, in bash, against a local
 * `listen` receiver: the example URLs become the receiver's, `listen` and
 * `serve` lines run on a free port until the next server line or the end of
 * their block, and ports 3000 and 3001 are the two builds of the app in the
 * regression-testing guide. A command ends with exit status 0 unless a
 * trailing `# exits N` says otherwise. So the documented commands cannot rot.
 * An example shown both in the README and on its command's page runs once.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FILES = ["README.md", ...markdownFiles(join(ROOT, "docs")).map((file) => relative(ROOT, file))];
const blocks = FILES.flatMap((file) => runnableBlocks(readFileSync(join(ROOT, file), "utf8"), file));
const planned = planRuns(blocks);
const { dir } = tempDir("webhook-cli-readme-");
const SECRET = "s3cret";
const LISTENING = /Listening on (\S+)|"event":"listening".*?"url":"([^"]+)"/;
const PRELUDE = 'set -o pipefail\nwebhook-cli() { node "$WEBHOOK_CLI_BIN" "$@"; }\n';

let receiver: { child: ChildProcess; done: Promise<CliResult>; url: string };
let apps: { old: TestServer; new: TestServer };

/** The README's app, in two builds: the new one adds 2 to `Order Completed` totals and answers 500 to user-3. */
function appBuild(build: "old" | "new"): Promise<TestServer> {
  let requests = 0;
  return startApp((request, res) => {
    const message = JSON.parse(request.body.toString("utf8")) as { event?: string; userId?: string };
    const failed = build === "new" && message.userId === "user-3";
    const total = build === "new" && message.event === "Order Completed" ? 12 : 10;
    res.writeHead(failed ? 500 : 200, { "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify({ ok: !failed, total, requestId: `r${(requests++).toString(16).padStart(7, "0")}` }));
  });
}

/** The files the examples name, in the directory they run in. */
function prepareFiles(receiverUrl: string): void {
  cpSync(join(ROOT, "fixtures"), join(dir, "fixtures"), { recursive: true });
  // events.ndjson as `generate --out events.ndjson` writes it (messages); the others are recordings.
  const messages = ["page", "screen", "identify", "track", "alias", "group", "delete"].map((type) => JSON.stringify(JSON.parse(readFileSync(join(ROOT, `fixtures/${type}.json`), "utf8"))));
  writeFileSync(join(dir, "events.ndjson"), `${messages.join("\n")}\n`);
  for (const name of ["recording.ndjson", "failed.ndjson"]) copyFileSync(join(ROOT, "fixtures/events.ndjson"), join(dir, name));
  copyFileSync(join(ROOT, "fixtures/traffic.ndjson"), join(dir, "traffic.ndjson"));
  writeFileSync(join(dir, "secret.txt"), `${SECRET}\n`);
  writeFileSync(join(dir, "vip.txt"), "user_1\nuser_2\n");
  writeFileSync(join(dir, "broken-payload.txt"), '{"type": "track", "userId": "u1", not json');
  writeFileSync(join(dir, ".secret"), `${SECRET}\n`);
  writeFileSync(join(dir, "webhook-cli.json"), JSON.stringify({ sharedSecret: SECRET, webhooks: [{ url: `${receiverUrl}/hook` }] }));
  const certs = generateCertificates();
  copyFileSync(certs.certPath, join(dir, "cert.pem"));
  copyFileSync(certs.keyPath, join(dir, "key.pem"));
  for (const sub of [".config/fish/completions", ".local/share/bash-completion/completions", ".zfunc"]) mkdirSync(join(dir, "home", sub), { recursive: true });
}

/**
 * The example's addresses made local: a running server's own (its `--port` or default), then the
 * app's two builds, then the receiver's for every other webhook.
 */
function localized(command: string, running: RunningServer | undefined): string {
  let local = command;
  if (running !== undefined) {
    const port = documentedPort(running.command);
    local = local.replaceAll(`http://127.0.0.1:${port}`, running.url).replaceAll(`http://localhost:${port}`, running.url);
  }
  for (const [port, app] of [["3000", apps.old], ["3001", apps.new]] as const) {
    local = local.replaceAll(`http://127.0.0.1:${port}`, app.url).replaceAll(`http://localhost:${port}`, app.url);
  }
  local = local
    .replaceAll("https://staging.example.com", receiver.url)
    .replaceAll("https://example.com", receiver.url)
    .replaceAll("http://127.0.0.1:8080", receiver.url);
  // curl must fail on an HTTP error, as the CLI does.
  return local.replace(/^curl /, "curl -fsS ");
}

function bash(script: string): ChildProcess {
  return spawn("bash", ["--norc", "-c", PRELUDE + script], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1", CI: "1", WEBHOOK_SECRET: SECRET, SECRET, HOME: join(dir, "home"), WEBHOOK_CLI_BIN: BIN },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

interface RunningServer {
  command: string;
  child: ChildProcess;
  done: Promise<CliResult>;
  url: string;
}

/** Starts the README's server line `original` (its addresses already made local in `command`). */
async function startServer(original: string, command: string): Promise<RunningServer> {
  const child = bash(asServer(command));
  const done = collect(child, 60_000);
  const match = await waitForLine(child, LISTENING, 15_000).catch(async (error: Error) => {
    child.kill("SIGKILL");
    throw new Error(`${command}: ${error.message}\n${(await done).stderr}`);
  });
  return { command: original, child, done, url: (match[1] ?? match[2]) as string };
}

/** Stops a server as a user would (Ctrl-C); the normal stop exits 0. */
async function stop(server: RunningServer | undefined): Promise<void> {
  if (!server) return;
  server.child.kill("SIGINT");
  const result = await server.done;
  expect({ command: server.command, code: result.code, stderr: result.stderr }).toEqual({ command: server.command, code: 0, stderr: expect.any(String) });
}

beforeAll(async () => {
  apps = { old: await appBuild("old"), new: await appBuild("new") };
  const child = spawnCli(["listen", "--port", "0", "--secret", SECRET, "--json"]);
  const done = collect(child, 600_000);
  const match = await waitForLine(child, LISTENING);
  receiver = { child, done, url: (match[1] ?? match[2]) as string };
  prepareFiles(receiver.url);
}, 30_000);

afterAll(async () => {
  receiver.child.kill("SIGKILL");
  await Promise.all([apps.old.close(), apps.new.close()]);
});

/** The commands `webhook-cli --help` lists (`help` aside). */
function programCommands(): string[] {
  const help = spawnSync(process.execPath, [BIN, "--help"], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } }).stdout;
  const list = help.slice(help.indexOf("Commands:"));
  return [...list.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((match) => match[1] as string).filter((name) => name !== "help");
}

/** The README's section (heading to next `## `) whose heading is `webhook-cli NAME…`. */
function readmeSection(name: string): string | undefined {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.search(new RegExp(`^## \`webhook-cli ${name}\\b`, "m"));
  if (start < 0) return undefined;
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

async function runBlock(block: PlannedBlock): Promise<void> {
  for (const segment of block.segments) {
    const server = segment.server === undefined ? undefined : await startServer(segment.server, localized(segment.server, undefined));
    try {
      for (const command of segment.commands) {
        const result = await collect(bash(localized(command, server)), 60_000);
        expect({ command, code: result.code, stderr: result.stderr }).toEqual({ command, code: expectedExit(command), stderr: expect.any(String) });
      }
    } finally {
      await stop(server);
    }
  }
}

describe("README and docs/ examples", () => {
  it("every command has a README section with runnable examples and a link to its page in docs/commands/, which has runnable examples too", () => {
    const commands = programCommands();
    expect(commands).toEqual(expect.arrayContaining(["generate", "send", "listen", "replay", "serve", "audience", "demo", "completion"]));
    for (const name of commands) {
      const section = readmeSection(name);
      expect(section, `README.md: no section "## \`webhook-cli ${name}\`"`).toBeDefined();
      expect(section, `README.md, webhook-cli ${name}: no runnable example`).toMatch(/^```sh runnable$/m);
      const page = new RegExp(`\\]\\((docs/commands/${name}(?:-[a-z]+)?\\.md)\\)`).exec(section as string)?.[1];
      expect(page, `README.md, webhook-cli ${name}: no link to docs/commands/${name}.md`).toBeDefined();
      expect(blocks.filter((block) => block.file === page).length, `${page}: no runnable example`).toBeGreaterThan(0);
    }
  });

  it("every block holds a command", () => {
    for (const block of blocks) expect(block.commands.length, `${block.file}:${block.line}`).toBeGreaterThan(0);
  });

  it.each(planned.map((block) => [`${block.file}:${block.line} ${block.heading}`, block] as const))("%s: run and exit as documented", async (_, block) => {
    await runBlock(block);
  }, 120_000);

  it("delivered every request to the receiver signed with the right secret", async () => {
    receiver.child.kill("SIGINT");
    const result = await receiver.done;
    const requests = result.stdout
      .split("\n")
      .filter((line) => line.includes('"event":"request"'))
      .map((line) => JSON.parse(line) as { signatureValid: boolean | null });
    expect(requests.length).toBeGreaterThan(20);
    expect(requests.filter((request) => request.signatureValid !== true)).toEqual([]);
  });

  it("the regression walkthrough reached both builds of the app, signed", () => {
    // Old: the README's baseline (40); the guide's baseline (40), the 10 relayed by listen,
    // --expect-status (3) and the selectors (1 + 12 + 1). New: the README's (40); the guide's 40 + 10.
    expect(apps.old.requests).toHaveLength(107);
    expect(apps.new.requests).toHaveLength(90);
    const unsigned = [...apps.old.requests, ...apps.new.requests].filter((request) => request.headers["x-signature"] === undefined);
    expect(unsigned).toEqual([]);
  });
});
