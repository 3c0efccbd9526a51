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
import { generateCertificates, type TestCertificates } from "../helpers/tls.js";

/*
 * Every block marked ```sh runnable in README.md and in docs/ (guides and
 * command pages included) is run here, line by line, in bash, against a local
 * `listen` receiver: the example URLs become the receiver's, `listen` and
 * `serve` lines run on a free port until the next server line or the end of
 * their block, and ports 3000 and 3001 are the two builds of the app in the
 * regression-testing guide. A command ends with exit status 0 unless a
 * trailing `# exits N` says otherwise. So the documented commands cannot rot.
 * An example shown both in the README and on its command's page runs once.
 *
 * The blocks run in two lanes at once, each in its own directory (the README
 * and the guides in one, the other pages in the other), each lane in file
 * order; a test reports its block's outcome.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FILES = ["README.md", ...markdownFiles(join(ROOT, "docs")).map((file) => relative(ROOT, file))];
const blocks = FILES.flatMap((file) => runnableBlocks(readFileSync(join(ROOT, file), "utf8"), file));
const planned = planRuns(blocks);
const laneOf = (block: PlannedBlock): number => (block.file === "README.md" || block.file.startsWith("docs/guides/") ? 0 : 1);
const { dir } = tempDir("webhook-cli-readme-");
const SECRET = "s3cret";
// listen and serve say `Listening on`; inspect, which only serves its page, `Inspector:`.
const LISTENING = /Listening on (\S+)|"event":"listening".*?"url":"([^"]+)"|Inspector: (\S+)/;
const PRELUDE = 'set -o pipefail\nwebhook-cli() { node "$WEBHOOK_CLI_BIN" "$@"; }\n';

let receiver: { child: ChildProcess; done: Promise<CliResult>; url: string };
let apps: { old: TestServer; new: TestServer };
/** Each planned block's outcomes, once its lane has run it. */
const outcomes = new Map<PlannedBlock, Promise<Outcome[]>>();

/** A command of a block (a server line: its stop), with the exit status it had and the one documented. */
interface Outcome {
  command: string;
  code: number | null;
  expected: number;
  stderr: string;
}

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

/** The files the examples name, in the directory `cwd` they run in. */
function prepareFiles(cwd: string, certs: TestCertificates): void {
  cpSync(join(ROOT, "fixtures"), join(cwd, "fixtures"), { recursive: true });
  // events.ndjson as `generate --out events.ndjson` writes it (messages); the others are recordings.
  const messages = ["page", "screen", "identify", "track", "alias", "group", "delete"].map((type) =>
    JSON.stringify(JSON.parse(readFileSync(join(ROOT, `fixtures/${type}.json`), "utf8"))),
  );
  writeFileSync(join(cwd, "events.ndjson"), `${messages.join("\n")}\n`);
  for (const name of ["recording.ndjson", "failed.ndjson"]) copyFileSync(join(ROOT, "fixtures/events.ndjson"), join(cwd, name));
  copyFileSync(join(ROOT, "fixtures/traffic.ndjson"), join(cwd, "traffic.ndjson"));
  writeFileSync(join(cwd, "secret.txt"), `${SECRET}\n`);
  writeFileSync(join(cwd, "vip.txt"), "user_1\nuser_2\n");
  writeFileSync(join(cwd, "broken-payload.txt"), '{"type": "track", "userId": "u1", not json');
  writeFileSync(join(cwd, ".secret"), `${SECRET}\n`);
  writeFileSync(join(cwd, "webhook-cli.json"), JSON.stringify({ sharedSecret: SECRET, webhooks: [{ url: `${receiver.url}/hook` }] }));
  copyFileSync(certs.certPath, join(cwd, "cert.pem"));
  copyFileSync(certs.keyPath, join(cwd, "key.pem"));
  // An empty home: the completion examples create the folders they write to, as on a fresh account.
  mkdirSync(join(cwd, "home"));
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
  for (const [port, app] of [
    ["3000", apps.old],
    ["3001", apps.new],
  ] as const) {
    local = local.replaceAll(`http://127.0.0.1:${port}`, app.url).replaceAll(`http://localhost:${port}`, app.url);
  }
  local = local
    .replaceAll("https://staging.example.com", receiver.url)
    .replaceAll("https://example.com", receiver.url)
    .replaceAll("http://127.0.0.1:8080", receiver.url);
  // curl must fail on an HTTP error, as the CLI does.
  return local.replace(/^curl /, "curl -fsS ");
}

function bash(script: string, cwd: string): ChildProcess {
  return spawn("bash", ["--norc", "-c", PRELUDE + script], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", CI: "1", WEBHOOK_SECRET: SECRET, SECRET, HOME: join(cwd, "home"), WEBHOOK_CLI_BIN: BIN },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

interface RunningServer {
  command: string;
  child: ChildProcess;
  done: Promise<CliResult>;
  url: string;
}

/** Starts the example's server line `original` in `cwd`. */
async function startServer(original: string, cwd: string): Promise<RunningServer> {
  const command = localized(original, undefined);
  const child = bash(asServer(command), cwd);
  const done = collect(child, 60_000);
  const match = await waitForLine(child, LISTENING, 15_000).catch(async (error: Error) => {
    child.kill("SIGKILL");
    throw new Error(`${command}: ${error.message}\n${(await done).stderr}`);
  });
  return { command: original, child, done, url: (match[1] ?? match[2] ?? match[3]) as string };
}

/** Stops a server as a user would (Ctrl-C); the normal stop exits 0. */
async function stop(server: RunningServer): Promise<Outcome> {
  server.child.kill("SIGINT");
  const result = await server.done;
  return { command: `${server.command} (stopped)`, code: result.code, expected: 0, stderr: result.stderr };
}

async function runBlock(block: PlannedBlock, cwd: string): Promise<Outcome[]> {
  const results: Outcome[] = [];
  for (const segment of block.segments) {
    const server = segment.server === undefined ? undefined : await startServer(segment.server, cwd);
    try {
      for (const command of segment.commands) {
        const result = await collect(bash(localized(command, server), cwd), 60_000);
        results.push({ command, code: result.code, expected: expectedExit(command), stderr: result.stderr });
      }
    } finally {
      if (server) results.push(await stop(server));
    }
  }
  return results;
}

/** Runs one lane's blocks one after another, in `cwd`; each block's outcomes settle on their own. */
function runLane(lane: readonly PlannedBlock[], cwd: string): void {
  let previous: Promise<unknown> = Promise.resolve();
  for (const block of lane) {
    const run = previous.then(() => runBlock(block, cwd));
    run.catch(() => undefined);
    outcomes.set(block, run);
    previous = run.catch(() => undefined);
  }
}

beforeAll(async () => {
  apps = { old: await appBuild("old"), new: await appBuild("new") };
  const child = spawnCli(["listen", "--port", "0", "--secret", SECRET, "--json"]);
  const done = collect(child, 600_000);
  const match = await waitForLine(child, LISTENING);
  receiver = { child, done, url: (match[1] ?? match[2]) as string };
  const certs = generateCertificates();
  for (const lane of [0, 1]) {
    const cwd = join(dir, `lane-${lane}`);
    mkdirSync(cwd);
    prepareFiles(cwd, certs);
    runLane(
      planned.filter((block) => laneOf(block) === lane),
      cwd,
    );
  }
}, 30_000);

afterAll(async () => {
  await Promise.allSettled(outcomes.values());
  receiver.child.kill("SIGKILL");
  await Promise.all([apps.old.close(), apps.new.close()]);
}, 120_000);

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

describe("README and docs/ examples", { tags: ["smoke"] }, () => {
  it("every command has a README section with runnable examples and a link to its page in docs/commands/, which has runnable examples too", () => {
    const commands = programCommands();
    expect(commands).toEqual(expect.arrayContaining(["generate", "send", "listen", "replay", "serve", "audience", "demo", "completion"]));
    for (const name of commands) {
      const section = readmeSection(name);
      expect(section, `README.md: no section "## \`webhook-cli ${name}\`"`).toBeDefined();
      // A ```sh script block runs whole (test/e2e/pasted-scripts.test.ts).
      expect(section, `README.md, webhook-cli ${name}: no runnable example`).toMatch(/^```sh (runnable|script)$/m);
      const page = new RegExp(`\\]\\((docs/commands/${name}(?:-[a-z]+)?\\.md)\\)`).exec(section as string)?.[1];
      expect(page, `README.md, webhook-cli ${name}: no link to docs/commands/${name}.md`).toBeDefined();
      expect(
        blocks.some((block) => block.file === page) || /^```sh script$/m.test(readFileSync(join(ROOT, page as string), "utf8")),
        `${page}: no runnable example`,
      ).toBe(true);
    }
  });

  it("every block holds a command", () => {
    for (const block of blocks) expect(block.commands.length, `${block.file}:${block.line}`).toBeGreaterThan(0);
  });

  it.each(planned.map((block) => [`${block.file}:${block.line} ${block.heading}`, block] as const))(
    "%s: run and exit as documented",
    async (_, block) => {
      const results = await (outcomes.get(block) as Promise<Outcome[]>);
      expect(results.length).toBeGreaterThan(0);
      for (const { command, code, expected, stderr } of results) {
        expect({ command, code, stderr }).toEqual({ command, code: expected, stderr: expect.any(String) });
      }
    },
    120_000,
  );

  it("delivered every request to the receiver signed with the right secret", async () => {
    await Promise.allSettled(outcomes.values());
    receiver.child.kill("SIGINT");
    const result = await receiver.done;
    const requests = result.stdout
      .split("\n")
      .filter((line) => line.includes('"event":"request"'))
      .map((line) => JSON.parse(line) as { signatureValid: boolean | null });
    expect(requests.length).toBeGreaterThan(20);
    expect(requests.filter((request) => request.signatureValid !== true)).toEqual([]);
  });

  it("the regression walkthrough reached both builds of the app, signed", async () => {
    await Promise.allSettled(outcomes.values());
    // Old: the baseline (40), the 10 relayed by listen, --expect-status (3) and the selectors (1 + 12 + 1). New: 40 + 10.
    // (The README shows the baseline and the comparison; the guide's same two blocks run once.)
    expect(apps.old.requests).toHaveLength(67);
    expect(apps.new.requests).toHaveLength(50);
    const unsigned = [...apps.old.requests, ...apps.new.requests].filter((request) => request.headers["x-signature"] === undefined);
    expect(unsigned).toEqual([]);
  });
});
