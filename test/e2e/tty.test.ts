import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN } from "../helpers/cli.js";
import { closeServersAfterEach } from "../helpers/setup.js";

// Run `npm run build` first. The terminal rules (docs/cli.md#terminals), under a real pseudo-terminal made by
// script(1) (util-linux): no TTY in CI is no excuse to leave them untested.
const { server } = closeServersAfterEach();
const dir = mkdtempSync(join(tmpdir(), "tty-e2e-"));

interface PtyRun {
  output: () => string;
  type: (text: string) => void;
  done: Promise<{ code: number | null; output: string }>;
}

/** Runs a shell command line in a pseudo-terminal 80 columns wide; what the terminal shows comes back. */
function inPty(commandLine: string): PtyRun {
  const env = { ...process.env, NO_COLOR: undefined, CI: undefined, WEBHOOK_SECRET: undefined, TERM: "xterm" } as NodeJS.ProcessEnv;
  const child = spawn("script", ["-q", "-e", "-c", `stty cols 80 rows 24; ${commandLine}`, "/dev/null"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no exit within 15 s; the terminal showed: ${output}`));
    }, 15_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  return { output: () => output, type: (text) => child.stdin.write(text), done };
}

const cli = `'${process.execPath}' '${BIN}'`;
// ora's default spinner frames.
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

describe("on a terminal", { tags: ["smoke"] }, () => {
  for (const command of ["send", "replay"]) {
    it(`${command} - says it reads stdin, and the first Ctrl-C ends it with 130`, async () => {
      const target = await server();
      const run = inPty(`${cli} ${command} - --url ${target.url}`);
      await expect.poll(() => run.output()).toMatch(/reading messages from stdin; end with Ctrl-D/);
      run.type("\x03");
      const { code } = await run.done;
      expect(code).toBe(130);
      expect(target.requests).toHaveLength(0);
    });
  }

  it("a spinner is drawn only when stdout and stderr are both terminals: not into `listen --json | cat`", async () => {
    // The control: on a terminal alone, listen spins.
    const alone = inPty(`${cli} listen --port 0`);
    await expect.poll(() => alone.output()).toMatch(SPINNER);
    alone.type("\x03");
    expect((await alone.done).code).toBe(0);

    // It stops by itself (a Ctrl-C would end `cat` too), after longer than the spinner's first frames take.
    const piped = inPty(`${cli} listen --port 0 --json --exit-after 1500ms | cat`);
    const { output } = await piped.done;
    expect(output).toMatch(/"event":"listening"/);
    expect(output).toMatch(/"event":"summary"/);
    expect(output).not.toMatch(SPINNER);
  });

  it("replay's spinner shows the live counts; Ctrl-C ends it with 130 and the resume hint", async () => {
    const target = await server((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const file = join(dir, "three.ndjson");
    writeFileSync(
      file,
      ["a", "b", "c"]
        .map((u) => JSON.stringify({ version: 1, type: "track", userId: u, event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" }))
        .join("\n"),
    );
    const run = inPty(`${cli} replay ${file} --url ${target.url}`);
    await expect.poll(() => run.output()).toMatch(/replay: 3 sent, 0 delivered, 3 retrying, 0 failed, [\d.]+\/s, oldest pending: next attempt in/);
    run.type("\x03");
    const { code, output } = await run.done;
    expect(code).toBe(130);
    expect(output).toContain("interrupted: resume with --from-line 1");
  });
});
