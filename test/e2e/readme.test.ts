import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, collect, spawnCli, waitForLine, type CliResult } from "../helpers/cli.js";
import { asServer, isServer, runnableBlocks } from "../helpers/readme.js";
import { tempDir } from "../helpers/setup.js";
import { generateCertificates } from "../helpers/tls.js";

/*
 * Every README block marked ```sh runnable is run here, line by line, in bash,
 * against a local `listen` receiver: the example URLs become the receiver's,
 * `listen` and `serve` lines run on a free port until the next server line
 * or the end of their block. So the documented commands cannot rot.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const blocks = runnableBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));
const { dir } = tempDir("webhook-cli-readme-");
const SECRET = "s3cret";
const LISTENING = /Listening on (\S+)|"event":"listening".*?"url":"([^"]+)"/;
const PRELUDE = 'set -o pipefail\nwebhook-cli() { node "$WEBHOOK_CLI_BIN" "$@"; }\n';

let receiver: { child: ChildProcess; done: Promise<CliResult>; url: string };

/** The files the examples name, in the directory they run in. */
function prepareFiles(receiverUrl: string): void {
  cpSync(join(ROOT, "fixtures"), join(dir, "fixtures"), { recursive: true });
  for (const name of ["events.ndjson", "recording.ndjson", "failed.ndjson"]) copyFileSync(join(ROOT, "fixtures/events.ndjson"), join(dir, name));
  writeFileSync(join(dir, "vip.txt"), "user_1\nuser_2\n");
  writeFileSync(join(dir, "broken-payload.txt"), '{"type": "track", "userId": "u1", not json');
  writeFileSync(join(dir, ".secret"), `${SECRET}\n`);
  writeFileSync(join(dir, "webhook-cli.json"), JSON.stringify({ sharedSecret: SECRET, webhooks: [{ url: `${receiverUrl}/hook` }] }));
  const certs = generateCertificates();
  copyFileSync(certs.certPath, join(dir, "cert.pem"));
  copyFileSync(certs.keyPath, join(dir, "key.pem"));
  for (const sub of [".config/fish/completions", ".local/share/bash-completion/completions", ".zfunc"]) mkdirSync(join(dir, "home", sub), { recursive: true });
}

/** The example's addresses made local: the receiver's for the webhooks, the running `serve`'s for its clients. */
function localized(command: string, serveUrl: string | undefined): string {
  let local = command
    .replaceAll("https://staging.example.com", receiver.url)
    .replaceAll("https://example.com", receiver.url)
    .replaceAll("http://127.0.0.1:8080", receiver.url);
  if (serveUrl !== undefined) local = local.replaceAll("http://127.0.0.1:8088", serveUrl);
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

async function startServer(command: string): Promise<RunningServer> {
  const child = bash(asServer(command));
  const done = collect(child, 60_000);
  const match = await waitForLine(child, LISTENING, 15_000).catch(async (error: Error) => {
    child.kill("SIGKILL");
    throw new Error(`${command}: ${error.message}\n${(await done).stderr}`);
  });
  return { command, child, done, url: (match[1] ?? match[2]) as string };
}

/** Stops a server as a user would (Ctrl-C); the normal stop exits 0. */
async function stop(server: RunningServer | undefined): Promise<void> {
  if (!server) return;
  server.child.kill("SIGINT");
  const result = await server.done;
  expect({ command: server.command, code: result.code, stderr: result.stderr }).toEqual({ command: server.command, code: 0, stderr: expect.any(String) });
}

beforeAll(async () => {
  const child = spawnCli(["listen", "--port", "0", "--secret", SECRET, "--json"]);
  const done = collect(child, 600_000);
  const match = await waitForLine(child, LISTENING);
  receiver = { child, done, url: (match[1] ?? match[2]) as string };
  prepareFiles(receiver.url);
}, 30_000);

afterAll(() => {
  receiver.child.kill("SIGKILL");
});

describe("README examples", () => {
  it("are marked runnable in every command's section", () => {
    const headings = blocks.map((block) => block.heading);
    for (const heading of ["`webhook-cli generate`", "`webhook-cli send`", "`webhook-cli listen`", "`webhook-cli replay`", "`webhook-cli serve`", "`webhook-cli audience sync`", "`webhook-cli demo`", "Fixtures", "Shell completion"]) {
      expect(headings).toContain(heading);
    }
    for (const block of blocks) expect(block.commands.length, `README.md:${block.line}`).toBeGreaterThan(0);
  });

  it.each(blocks.map((block) => [`${block.heading} (README.md:${block.line})`, block] as const))("%s run and exit 0", async (_, block) => {
    let server: RunningServer | undefined;
    try {
      for (const command of block.commands) {
        if (isServer(command)) {
          await stop(server);
          server = undefined;
          server = await startServer(localized(command, undefined));
          continue;
        }
        const result = await collect(bash(localized(command, server?.url)), 60_000);
        expect({ command, code: result.code, stderr: result.stderr }).toEqual({ command, code: 0, stderr: expect.any(String) });
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
});
