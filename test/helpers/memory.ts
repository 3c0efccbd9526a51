import { readdirSync, readFileSync } from "node:fs";

/**
 * The memory a process may reach with listen's default bounds, as docs/receiver.md#memory says
 * (and a memory test's limit: 1.5 times that, so noise in the garbage collector's timing does not
 * fail a run, while a regression is stopped long before it takes the machine to gigabytes).
 */
export const DOCUMENTED_RSS_MB = 640;
export const RSS_LIMIT_MB = DOCUMENTED_RSS_MB * 1.5;

/** The RSS of a process in MB, from /proc (Linux); NaN once it is gone. */
export function rssNow(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

export interface RssWatch {
  /** The highest RSS seen so far, in MB. */
  readonly peak: number;
  /** True once the RSS passed the limit (the process was then killed). */
  readonly over: boolean;
  stop(): void;
}

/**
 * Samples a process's RSS every few milliseconds; past `limitMb` it kills the process at once
 * (SIGKILL), so a test that regresses stops there instead of growing further.
 */
export function watchRss(pid: number, limitMb = RSS_LIMIT_MB, everyMs = 10): RssWatch {
  const state = { peak: 0, over: false };
  const sample = (): void => {
    const rss = rssNow(pid);
    if (!(rss > 0)) return;
    state.peak = Math.max(state.peak, rss);
    if (rss > limitMb && !state.over) {
      state.over = true;
      process.kill(pid, "SIGKILL");
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    get peak() {
      sample();
      return state.peak;
    },
    get over() {
      sample();
      return state.over;
    },
    stop: () => clearInterval(timer),
  };
}

/** Whether a process runs Node.js: by its executable, since Node.js 24 names its main thread `MainThread` in `comm`. */
function isNode(pid: number): boolean {
  const program = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
  return program === process.execPath || program === "node" || program.endsWith("/node");
}

/** The first Node.js process in the tree under `pid` (the CLI that script(1) started), or undefined. */
export function nodeUnder(pid: number): number | undefined {
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift() as number;
    try {
      if (current !== pid && isNode(current)) return current;
      for (const task of readdirSync(`/proc/${current}/task`)) {
        queue.push(...readFileSync(`/proc/${current}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
      }
    } catch {
      // The process ended meanwhile.
    }
  }
  return undefined;
}
