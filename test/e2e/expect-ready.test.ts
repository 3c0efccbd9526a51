import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jsonEvents, runInProcess, startInProcess } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// `expect --ready` (docs/commands/expect.md#waiting-for-listen): the line of a pasted script that
// waits for a background listen, so the next line can read its URL.
const { dir, file } = tempDir("webhook-cli-expect-ready-");
let count = 0;
const fresh = (): string => `ready-${count++}.url`;

/** The id of a process that has exited. */
async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid as number;
}

/** A port nothing listens on any more. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("webhook-cli expect --ready", () => {
  it("waits for the ready file listen has not written yet, then names both URLs; exit 0", async () => {
    const ready = fresh();
    const waiting = startInProcess(["expect", "--from", ready, "--ready", "--timeout", "1m"], { cwd: dir });
    const listen = startInProcess(["listen", "--port", "0", "--ready-file", ready], { cwd: dir });
    const [, url] = await listen.waitFor(/Listening on (\S+)/);
    const [, control] = await listen.waitFor(/Control API: (\S+)/);
    const result = await waiting.done;
    expect(result).toEqual({ code: 0, stdout: `✓ listen is ready: ${url} (control API ${control})\n`, stderr: "" });
    const json = await runInProcess(["expect", "--from", ready, "--ready", "--json"], { cwd: dir });
    expect(jsonEvents(json.stdout)).toEqual([{ event: "ready", url, control }]);
    const byUrl = await runInProcess(["expect", "--from", control as string, "--ready"], { cwd: dir });
    expect(byUrl).toEqual({ code: 0, stdout: `✓ listen is ready: ${control}\n`, stderr: "" });
    listen.stop("SIGINT");
    expect((await listen.done).code).toBe(0);
  });

  it("with --pid of a listen that exited before it was ready: exit 2 at once, long before --timeout", async () => {
    const pid = await exitedPid();
    const result = await runInProcess(["expect", "--from", fresh(), "--ready", "--pid", String(pid), "--timeout", "10m"], { cwd: dir });
    expect(result).toEqual({ code: 2, stdout: "", stderr: `error: --pid: listen (pid ${pid}) exited before it was ready: its own error above says why\n` });
  }, 30_000);

  it("--pid of a listen that exited but that its shell has not reaped yet (a zombie) counts as exited", async () => {
    // The first sleep ends after its shell has become the second, which never reaps it.
    const parent = spawn("bash", ["--norc", "-c", "sleep 0.2 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
    const pid = Number((await new Promise<Buffer>((resolve) => parent.stdout.once("data", resolve))).toString());
    try {
      const result = await runInProcess(["expect", "--from", fresh(), "--ready", "--pid", String(pid), "--timeout", "10m"], { cwd: dir });
      expect(result).toMatchObject({ code: 2, stderr: `error: --pid: listen (pid ${pid}) exited before it was ready: its own error above says why\n` });
    } finally {
      parent.kill("SIGKILL");
    }
  }, 30_000);

  it("without --pid: exit 2 when the file is not written within --timeout", async () => {
    const ready = fresh();
    const result = await runInProcess(["expect", "--from", ready, "--ready", "--timeout", "200ms"], { cwd: dir });
    expect(result).toEqual({
      code: 2,
      stdout: "",
      stderr: `error: ${ready}: --from: not written within 200ms: is listen running with --ready-file ${ready}?\n`,
    });
  });

  it("a ready file left by an earlier listen is not taken for a running one: its control port must answer", async () => {
    const port = await closedPort();
    const ready = file(fresh(), `http://127.0.0.1:${await closedPort()}\nhttp://127.0.0.1:${port}\n`);
    const result = await runInProcess(["expect", "--from", ready, "--ready", "--timeout", "300ms"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `error: --from: http://127.0.0.1:${port} (line 2 of ${ready}) does not answer after 300ms: is listen running? (a ready file left by an earlier listen names a closed port)\n`,
    );
  });

  it("refuses at once what is not listen's ready file, filters, and --pid without --ready (exit 2)", async () => {
    const fifo = join(dir, "fifo.url");
    execFileSync("mkfifo", [fifo]);
    const served = file(fresh(), "http://127.0.0.1:8088\n");
    const cases: [string[], string][] = [
      [["--from", fifo, "--ready", "--timeout", "1m"], `error: ${fifo}: --from: not a regular file: give the file listen --ready-file writes\n`],
      [["--from", served, "--ready", "--timeout", "1m"], `error: ${served}: --from: no control API URL on line 2: give the file listen --ready-file writes\n`],
      [["--from", "x.url", "--ready", "--type", "track"], "error: --type: --ready waits for listen to be listening; it counts no requests (drop --type)\n"],
      [["--from", "x.url", "--pid", "42"], "error: --pid: only with --ready, which watches listen's process\n"],
    ];
    for (const [args, stderr] of cases) expect(await runInProcess(["expect", ...args], { cwd: dir })).toEqual({ code: 2, stdout: "", stderr });
  }, 30_000);
});
