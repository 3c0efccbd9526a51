/**
 * Node.js 24's V8 grows the young generation up to 64 MB semi-spaces as a long run goes on, so a
 * replay of a million lines levels off near 300 MB of RSS while its live data is under 20 MB; with
 * 16 MB semi-spaces it stays near 150 MB, as fast (bench/README.md). The flag only takes effect at
 * start-up (v8.setFlagsFromString is too late), so replay starts itself again with it, in the same
 * process (process.execve: Node.js 22.15 and later, not Windows): same PID, same standard streams,
 * one more start of Node.js (~20 ms). Where there is no process.execve (22.13, 22.14) replay runs
 * as it is, silently. Not when the flag is already given (on the command line or in NODE_OPTIONS):
 * the user's choice stands.
 *
 * A single executable (`npm run sea`) takes every word on its command line as its own, and Node's
 * flags from NODE_OPTIONS only: there the flag goes into NODE_OPTIONS, and the arguments stay as
 * they were, argv[1] being the name it was started by.
 */
export const SEMI_SPACE_FLAG = "--max-semi-space-size=16";

// Commands whose runs are long enough for the young generation to grow, and cheap enough to restart.
const RELAUNCHED = new Set(["replay"]);

export interface ProcessFacts {
  argv: readonly string[];
  execArgv: readonly string[];
  nodeOptions: string | undefined;
  platform: string;
  canExecve: boolean;
  /** Running as a single executable (node:sea's isSea()). */
  sea: boolean;
}

export interface Relaunch {
  /** The new process's arguments, argv[0] first. */
  argv: string[];
  /** Its NODE_OPTIONS, when they change. */
  nodeOptions?: string;
}

/** How to start this process again, or undefined to go on as it is. */
export function relaunchPlan(facts: ProcessFacts): Relaunch | undefined {
  if (!facts.canExecve || facts.platform === "win32") return undefined;
  // The program's own options take no value, so the first other word is the command.
  const command = facts.argv.slice(2).find((word) => !word.startsWith("-"));
  if (command === undefined || !RELAUNCHED.has(command)) return undefined;
  const given = (flag: string): boolean => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(flag);
  if (facts.execArgv.some(given) || (facts.nodeOptions ?? "").split(/\s+/).some(given)) return undefined;
  const [node = "node", ...rest] = facts.argv;
  if (facts.sea) return { argv: rest, nodeOptions: [facts.nodeOptions, SEMI_SPACE_FLAG].filter(Boolean).join(" ") };
  return { argv: [node, SEMI_SPACE_FLAG, ...facts.execArgv, ...rest] };
}
