import type { CliIo } from "../terminal/io.js";
import type { Output } from "../terminal/output.js";

const STDIN_HINT = "reading messages from stdin; end with Ctrl-D";

/** Standard input was not read to its end: the stop signal (Ctrl-C) came first. */
export const INTERRUPTED = Symbol("interrupted");

/**
 * Reads standard input with `read`. On a terminal it says so first (a silent wait looks like a
 * hang), and the stop signal ends the wait at once: the caller then exits 130/143.
 */
export async function readStdin<T>(io: CliIo, output: Output, read: () => Promise<T>): Promise<T | typeof INTERRUPTED> {
  if (io.stdinIsTTY === true) output.log(STDIN_HINT);
  if (io.signal.aborted) return INTERRUPTED;
  let onAbort = (): void => {};
  const aborted = new Promise<typeof INTERRUPTED>((resolve) => {
    onAbort = () => resolve(INTERRUPTED);
    io.signal.addEventListener("abort", onAbort, { once: true });
  });
  const reading = read();
  // Once interrupted, how the read ends no longer matters.
  reading.catch(() => {});
  try {
    return await Promise.race([reading, aborted]);
  } finally {
    io.signal.removeEventListener("abort", onAbort);
  }
}
