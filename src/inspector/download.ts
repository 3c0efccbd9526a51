import type { ServerResponse } from "node:http";
import { writeOrWait } from "../http/loopback-api.js";

/** Downloads answered at once; each holds one recording line while its client reads. */
export const MAX_DOWNLOADS = 4;

/**
 * The distinct row ids of `?ids=1,2,…`, oldest first (as a recording is
 * written), or why not: there cannot be more distinct rows than are kept.
 */
export function downloadIds(param: string, keep: number): number[] | { error: string } {
  const ids = new Set<number>();
  for (const part of param.split(",")) {
    if (!/^\d{1,15}$/.test(part)) continue;
    ids.add(Number(part));
    if (ids.size > keep) return { error: `more than ${keep} distinct ids: the inspector keeps ${keep} requests (--ui-keep)` };
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * Writes the lines one by one, building the next only once the client has
 * taken the previous one, so a download of any size holds one line in memory.
 * Stops early when the client goes away.
 */
export async function writeLines(res: ServerResponse, lines: Iterable<string> | AsyncIterable<string>): Promise<void> {
  for await (const line of lines) {
    if (res.destroyed) return;
    const more = write(res, line);
    if (more !== true && !(await more)) return;
  }
  res.end();
}

/** Writes `line`: true when `res` takes more at once, else a promise of true once it has taken the line, false if it closes first. */
function write(res: ServerResponse, line: string): true | Promise<boolean> {
  let ready = (): void => {};
  if (writeOrWait(res, line, () => ready())) return true;
  return new Promise((resolve) => {
    const onClose = (): void => resolve(false);
    ready = () => {
      res.off("close", onClose);
      resolve(true);
    };
    res.once("close", onClose);
  });
}
