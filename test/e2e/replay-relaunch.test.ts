import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SEMI_SPACE_FLAG } from "../../src/cli/shell/relaunch.js";
import { collect, spawnCli, type CliResult } from "../helpers/cli.js";
import { startServer } from "../helpers/http-server.js";
import { hook } from "../helpers/loaded-modules.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// process.execve: Node.js 22.15 and later (CI's 22, 24 and 26 all have it); /proc to read the command line.
const canRelaunch = typeof process.execve === "function" && process.platform === "linux";

describe("replay's relaunch through process.execve", { tags: ["smoke"] }, () => {
  const { ndjson } = tempDir("webhook-cli-relaunch-");
  const { servers } = closeServersAfterEach();

  /** Replays one message and reads the command line of the process while its request is held: the PID spawned is the one sending. */
  async function commandLineWhileSending(env: Record<string, string | undefined>): Promise<{ cmdline: string[]; result: CliResult }> {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = await startServer(async (_request, res) => {
      await held;
      res.writeHead(200).end();
    });
    servers.push(server);
    const file = ndjson([JSON.stringify({ version: 1, type: "track", userId: "u", event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" })]);
    const child = spawnCli(["replay", file, "--url", `${server.url}/hook`, "--secret", "s3cret"], { env });
    let exited = false;
    const done = collect(child).finally(() => (exited = true));
    await expect.poll(() => server.requests.length > 0 || exited, { interval: 10 }).toBe(true);
    const cmdline = exited ? [] : readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0");
    release();
    return { cmdline, result: await done };
  }

  it.skipIf(!canRelaunch)("runs as the same process, started again with a 16 MB young generation, and replays as usual", async () => {
    const { cmdline, result } = await commandLineWhileSending({ NODE_OPTIONS: undefined });
    expect(result.stderr).not.toMatch(/Warning|execve|rror/);
    expect(result.code).toBe(0);
    expect(cmdline[1]).toBe(SEMI_SPACE_FLAG);
    expect(cmdline.slice(2, 4)).toEqual([expect.stringMatching(/bin\/webhook-cli\.js$/), "replay"]);
    expect(result.stdout).toMatch(/1 message: 1 delivered/);
  });

  it.skipIf(!canRelaunch)("keeps the size the user gave in NODE_OPTIONS", async () => {
    const { cmdline, result } = await commandLineWhileSending({ NODE_OPTIONS: "--max-semi-space-size=32" });
    expect(result.code).toBe(0);
    expect(cmdline.slice(1, 3)).toEqual([expect.stringMatching(/bin\/webhook-cli\.js$/), "replay"]);
    expect(cmdline).not.toContain(SEMI_SPACE_FLAG);
  });

  it.skipIf(process.platform !== "linux").each([
    ["missing (Node.js 22.13 and 22.14)", "without-execve.mjs"],
    ["refused (a sandbox)", "execve-refused.mjs"],
  ])("where process.execve is %s: replay runs as it is and says nothing", async (_name, file) => {
    const { cmdline, result } = await commandLineWhileSending({ NODE_OPTIONS: `--import ${hook(file)}` });
    // Its summary line and nothing else: no warning, no error from the missing or refused call.
    expect(result.stderr).toMatch(/^replay: 1 sent, 1 delivered, 0 retrying, 0 failed, [\d.]+\/s\n$/);
    expect(result.code).toBe(0);
    expect(cmdline.slice(1, 3)).toEqual([expect.stringMatching(/bin\/webhook-cli\.js$/), "replay"]);
    expect(cmdline).not.toContain(SEMI_SPACE_FLAG);
    expect(result.stdout).toMatch(/1 message: 1 delivered/);
  });
});
