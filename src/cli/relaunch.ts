/**
 * Node.js 24's V8 grows the young generation up to 64 MB semi-spaces as a long run goes on, so a
 * replay of a million lines levels off near 300 MB of RSS while its live data is under 20 MB; with
 * 16 MB semi-spaces (Node.js 20's ceiling) it stays near 150 MB, as fast (bench/README.md). The
 * flag only takes effect at start-up (v8.setFlagsFromString is too late), so replay starts itself
 * again with it, in the same process (process.execve: Node.js 22.15+ and 23.11+, not Windows):
 * same PID, same standard streams, one more start of Node.js (~20 ms). Not when the flag is
 * already given (on the command line or in NODE_OPTIONS): the user's choice stands.
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
}

/** The arguments to start this process again with (after the Node.js binary), or undefined to go on as it is. */
export function relaunchArgs(facts: ProcessFacts): string[] | undefined {
  if (!facts.canExecve || facts.platform === "win32") return undefined;
  // The program's own options take no value, so the first other word is the command.
  const command = facts.argv.slice(2).find((word) => !word.startsWith("-"));
  if (command === undefined || !RELAUNCHED.has(command)) return undefined;
  const given = (flag: string): boolean => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(flag);
  if (facts.execArgv.some(given) || (facts.nodeOptions ?? "").split(/\s+/).some(given)) return undefined;
  return [SEMI_SPACE_FLAG, ...facts.execArgv, ...facts.argv.slice(1)];
}
