import { fencedBlocks } from "./markdown.js";

/**
 * The runnable examples of the README and docs/: fenced blocks whose info
 * string is `sh runnable`, each line (with `\` continuations joined) one command.
 */
export interface RunnableBlock {
  /** The file, relative to the repository (`README.md`, `docs/commands/send.md`). */
  file: string;
  /** The nearest heading above the block, to name it in test output. */
  heading: string;
  /** 1-based line of the opening fence. */
  line: number;
  commands: string[];
}

export function runnableBlocks(markdown: string, file: string): RunnableBlock[] {
  return fencedBlocks(markdown)
    .filter((block) => /^sh\s+runnable\b/.test(block.info))
    .map(({ heading, line, body }) => ({ file, heading, line, commands: commandsOf(body) }));
}

/** One command per line; a line ending in `\` goes on on the next; blank and comment-only lines are skipped. */
function commandsOf(lines: readonly string[]): string[] {
  const commands: string[] = [];
  let pending = "";
  for (const line of lines) {
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const command = (pending + line).trim();
    pending = "";
    if (command !== "" && !command.startsWith("#")) commands.push(command);
  }
  return commands;
}

/**
 * A server line and the commands that run against it (until the next server
 * line or the block's end), or commands with no server.
 */
export interface Segment {
  server?: string;
  commands: string[];
}

export interface PlannedBlock extends RunnableBlock {
  segments: Segment[];
}

/**
 * The blocks cut into segments, each example run once: the README shows a
 * command's most useful examples and its page in docs/ shows them again among
 * the rest, so a command already run against the same server (or none) is not
 * run again. A server segment is kept whole unless its server line and every
 * command after it ran before. Blocks left with nothing to run are dropped.
 */
export function planRuns(blocks: readonly RunnableBlock[]): PlannedBlock[] {
  const seen = new Set<string>();
  const planned: PlannedBlock[] = [];
  for (const block of blocks) {
    const segments: Segment[] = [];
    for (const segment of segmentsOf(block.commands)) {
      const keys = segment.commands.map((command) => `${segment.server ?? ""}\n${command}`);
      if (segment.server === undefined) {
        const fresh = segment.commands.filter((_, i) => !seen.has(keys[i] as string));
        if (fresh.length > 0) segments.push({ commands: fresh });
      } else if (!seen.has(`server\n${segment.server}`) || keys.some((key) => !seen.has(key))) {
        segments.push(segment);
        seen.add(`server\n${segment.server}`);
      }
      for (const key of keys) seen.add(key);
    }
    if (segments.length > 0) planned.push({ ...block, segments });
  }
  return planned;
}

function segmentsOf(commands: readonly string[]): Segment[] {
  const segments: Segment[] = [];
  let current: Segment = { commands: [] };
  for (const command of commands) {
    if (isServer(command)) {
      if (current.server !== undefined || current.commands.length > 0) segments.push(current);
      current = { server: command, commands: [] };
    } else current.commands.push(command);
  }
  if (current.server !== undefined || current.commands.length > 0) segments.push(current);
  return segments;
}

/** A long-running command of the examples (a receiver, the service, or a recording's page), run until stopped. */
export function isServer(command: string): boolean {
  return /^webhook-cli (listen|serve|inspect)\b/.test(command) && !/\s--failed\b/.test(command);
}

/**
 * A server command made to run here: `exec`'d (so a signal reaches it), on
 * any free port, its comment and trailing `&` dropped.
 */
export function asServer(command: string): string {
  // A trailing `&` (run in the background) is how it runs here anyway.
  const [, name, rest] = /^webhook-cli (listen|serve|inspect)(.*?)(?:\s*&)?$/.exec(stripComment(command)) as RegExpExecArray;
  // The inspector too gets any free port instead of its default 4040.
  const ui = /\s--ui\b/.test(rest as string) && !/\s--ui-port\b/.test(rest as string) ? " --ui-port 0" : "";
  return `exec node "$WEBHOOK_CLI_BIN" ${name} --port 0${(rest as string).replace(/\s--port\s+\d+/g, "")}${ui}`;
}

/** The port a server command's example addresses use: its `--port`, else the command's default. */
export function documentedPort(command: string): number {
  const port = /\s--port\s+(\d+)/.exec(command)?.[1];
  if (port !== undefined) return Number(port);
  return /^webhook-cli serve\b/.test(command) ? 8088 : 8080;
}

/** The exit status an example documents with a trailing `# exits N` comment; 0 otherwise. */
export function expectedExit(command: string): number {
  return Number(/#\s*exits\s+(\d+)\b/.exec(command)?.[1] ?? 0);
}

/** Drops a trailing `# comment` (after whitespace, outside quotes). */
function stripComment(command: string): string {
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && /\s/.test(command[i - 1] ?? "")) return command.slice(0, i).trimEnd();
  }
  return command;
}
