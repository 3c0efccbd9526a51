import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fencedBlocks } from "./markdown.js";

/**
 * The snippets of README.md and docs/ that start a background process, as a user pastes them:
 * ```` ```sh script ```` blocks (pasted into a terminal, whole) and the `run: |` scripts of
 * ```` ```yaml ```` workflows (run by GitHub's runner as `bash -e FILE`).
 */

/** A ```` ```sh script ```` block: its text, and the exit status each command documents. */
export interface ScriptBlock {
  file: string;
  heading: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  /** The commands (a `\` continuation joined), by the script line they end on (1-based), with the status a `# exits N` states. */
  commands: { line: number; command: string; expected: number }[];
}

/** A workflow step's `run: |` script, with the step's `env:`. */
export interface WorkflowScript {
  file: string;
  /** 1-based line of the `run: |` key. */
  line: number;
  text: string;
  env: Record<string, string>;
}

export function scriptBlocks(markdown: string, file: string): ScriptBlock[] {
  return fencedBlocks(markdown)
    .filter((block) => block.info === "sh script")
    .map(({ line, heading, body }) => ({ file, heading, line, text: `${body.join("\n")}\n`, commands: commandsOf(body) }));
}

function commandsOf(body: readonly string[]): ScriptBlock["commands"] {
  const commands: ScriptBlock["commands"] = [];
  let pending = "";
  body.forEach((text, i) => {
    if (text.endsWith("\\")) {
      pending += `${text.slice(0, -1)} `;
      return;
    }
    const command = (pending + text).trim();
    pending = "";
    if (command === "" || command.startsWith("#")) return;
    commands.push({ line: i + 1, command, expected: Number(/#\s*exits\s+(\d+)\b/.exec(command)?.[1] ?? 0) });
  });
  return commands;
}

/** Every `run: |` script of the ```` ```yaml ```` blocks, with its step's `env:` (a flow `{ K: v }` or a block mapping). */
export function workflowScripts(markdown: string, file: string): WorkflowScript[] {
  const scripts: WorkflowScript[] = [];
  for (const block of fencedBlocks(markdown).filter((candidate) => candidate.info === "yaml")) {
    block.body.forEach((text, i) => {
      const run = /^(\s*)(- )?run: \|\s*$/.exec(text);
      if (!run) return;
      const keyIndent = (run[1] as string).length + (run[2] ?? "").length;
      const step = stepLines(block.body, i, keyIndent);
      const body: string[] = [];
      for (const line of block.body.slice(i + 1)) {
        if (line.trim() !== "" && indentOf(line) <= keyIndent) break;
        body.push(line);
      }
      const margin = Math.min(...body.filter((line) => line.trim() !== "").map(indentOf));
      scripts.push({
        file,
        line: block.line + 1 + i,
        text: `${body
          .map((line) => line.slice(margin))
          .join("\n")
          .trimEnd()}\n`,
        env: envOf(step, keyIndent),
      });
    });
  }
  return scripts;
}

/** The lines of the step holding line `at`: from its `- ` to the next step or the end of its list. */
function stepLines(lines: readonly string[], at: number, keyIndent: number): string[] {
  const isStart = (line: string): boolean => indentOf(line) === keyIndent - 2 && line.trimStart().startsWith("- ");
  let start = at;
  while (start > 0 && !isStart(lines[start] as string)) start -= 1;
  let end = at + 1;
  while (end < lines.length && !isStart(lines[end] as string) && ((lines[end] as string).trim() === "" || indentOf(lines[end] as string) >= keyIndent))
    end += 1;
  return lines.slice(start, end).map((line, i) => (i === 0 ? `${" ".repeat(keyIndent)}${line.slice(keyIndent)}` : line));
}

function envOf(step: readonly string[], keyIndent: number): Record<string, string> {
  const env: Record<string, string> = {};
  const at = step.findIndex((line) => indentOf(line) === keyIndent && /^\s*env:/.test(line));
  if (at < 0) return env;
  const flow = /^\s*env:\s*\{(.*)\}\s*$/.exec(step[at] as string)?.[1];
  const pairs = flow !== undefined ? flow.split(",") : step.slice(at + 1).filter((line) => indentOf(line) > keyIndent && line.trim() !== "");
  for (const pair of pairs) {
    const [, key, value] = /^\s*([A-Za-z_][A-Za-z0-9_]*):\s*(.*?)\s*$/.exec(pair) ?? [];
    if (key !== undefined) env[key] = (value as string).replace(/^(["'])(.*)\1$/, "$2");
  }
  return env;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Every fenced block with a command sent to the background (a line ending in `&`): what must be run whole. */
export function backgroundBlocks(markdown: string, file: string): { file: string; line: number; info: string }[] {
  return fencedBlocks(markdown)
    .filter((block) => block.body.some((text) => /(^|[^&])&\s*$/.test(text.replace(/\s#.*$/, ""))))
    .map(({ line, info }) => ({ file, line, info }));
}

export interface ScriptRun {
  /** The shell's exit status, once it exited (what a terminal or the runner reports). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Each command that failed: the script line it ended on and its status (a terminal shows them one by one). */
  failed: { line: number; status: number }[];
}

export interface ScriptOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `bash -e`, as GitHub's runner runs a `run:` script; without it, as pasted into a terminal. */
  errexit?: boolean;
  /** Longest the shell may run. */
  timeoutMs?: number;
}

/**
 * Runs `text` as a script file in bash, in its own process group. When the shell has exited,
 * whatever it left running in the background (a `listen` the snippet keeps) is stopped with
 * SIGTERM, as closing the terminal or ending the job would; the outputs are read to their end.
 */
export function runScript(text: string, options: ScriptOptions): Promise<ScriptRun> {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-script-"));
  const script = join(dir, "script.sh");
  const statuses = join(dir, "statuses");
  writeFileSync(script, text);
  writeFileSync(statuses, "");
  // Sourced by bash before the script: notes each failing command's line and status, changing nothing else.
  // (BASH_ENV is then unset, so no bash the script starts reads it.)
  writeFileSync(join(dir, "env.sh"), `trap 'echo "$LINENO $?" >> ${JSON.stringify(statuses)}' ERR\nunset BASH_ENV\n`);
  const child = spawn("bash", ["--noprofile", "--norc", ...(options.errexit ? ["-e"] : []), script], {
    cwd: options.cwd,
    env: { ...options.env, BASH_ENV: join(dir, "env.sh") },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const group = child.pid as number;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-group, signal);
    } catch {}
  };
  return new Promise((resolve, reject) => {
    let code: number | null = null;
    const deadline = setTimeout(() => {
      signalGroup("SIGKILL");
      reject(new Error(`the script did not end within ${options.timeoutMs ?? 60_000} ms\n${text}\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on("exit", (status) => {
      code = status;
      signalGroup("SIGTERM");
    });
    child.on("close", () => {
      clearTimeout(deadline);
      const failed = readFileSync(statuses, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((entry) => entry.split(" ").map(Number) as [number, number])
        .map(([line, status]) => ({ line, status }));
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, stderr, failed });
    });
  });
}
