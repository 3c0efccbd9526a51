import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, collect, spawnCli, waitForLine, type CliResult } from "../helpers/cli.js";
import { startServer as startApp, type TestServer } from "../helpers/http-server.js";
import { asServer, documentedPort, expectedExit, isServer, runnableBlocks } from "../helpers/readme.js";
import { tempDir } from "../helpers/setup.js";
import { generateCertificates } from "../helpers/tls.js";

/*
 * Every README block marked ```sh runnable is run here, line by line, in bash,
 * against a local `listen` receiver: the example URLs become the receiver's,
 * `listen` and `serve` lines run on a free port until the next server line
 * or the end of their block, and ports 3000 and 3001 are the two builds of
 * the app in "Regression testing a receiver". A command ends with exit status
 * 0 unless a trailing `# exits N` says otherwise. So the documented commands
 * cannot rot.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const blocks = runnableBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));
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
  for (const name of ["events.ndjson", "recording.ndjson", "failed.ndjson"]) copyFileSync(join(ROOT, "fixtures/events.ndjson"), join(dir, name));
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

describe("README examples", () => {
  it("are marked runnable in every command's section", () => {
    const headings = blocks.map((block) => block.heading);
    const sections = ["`webhook-cli generate`", "`webhook-cli send`", "`webhook-cli listen`", "`webhook-cli replay`", "`webhook-cli serve`", "`webhook-cli audience sync`", "`webhook-cli demo`"];
    const guides = ["Forwarding to your app and the inspector page (`listen --forward-to`, `--ui`)", "Regression testing a receiver", "Fixtures", "Shell completion"];
    for (const heading of [...sections, ...guides]) {
      expect(headings).toContain(heading);
    }
    for (const block of blocks) expect(block.commands.length, `README.md:${block.line}`).toBeGreaterThan(0);
  });

  it.each(blocks.map((block) => [`${block.heading} (README.md:${block.line})`, block] as const))("%s run and exit as documented", async (_, block) => {
    let server: RunningServer | undefined;
    try {
      for (const command of block.commands) {
        if (isServer(command)) {
          await stop(server);
          server = undefined;
          server = await startServer(command, localized(command, undefined));
          continue;
        }
        const result = await collect(bash(localized(command, server)), 60_000);
        expect({ command, code: result.code, stderr: result.stderr }).toEqual({ command, code: expectedExit(command), stderr: expect.any(String) });
      }
    } finally {
      await stop(server);
    }
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
    // Old: the baseline (40), the 10 relayed by listen, --expect-status (3) and the selectors (1 + 12 + 1). New: 40 + 10.
    expect(apps.old.requests).toHaveLength(67);
    expect(apps.new.requests).toHaveLength(50);
    const unsigned = [...apps.old.requests, ...apps.new.requests].filter((request) => request.headers["x-signature"] === undefined);
    expect(unsigned).toEqual([]);
  });
});
