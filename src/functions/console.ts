import { formatWithOptions } from "node:util";
import type { InvocationState } from "./invocation.js";
import type { ConsoleEntry, ConsoleLevel } from "./types.js";

/** Where a line goes: the running invocation's record, else the load's (top-level code). */
export type LogSink = (entry: ConsoleEntry) => void;

/**
 * The function's `console`: each call is formatted as Node formats it (`%s`, objects inspected)
 * and kept with the invocation it belongs to, not printed: the command shows it with the result,
 * as the editor's Test tab does. Calls after an invocation ended are dropped.
 */
export function captureConsole(current: () => InvocationState | undefined, atLoad: LogSink): Record<string, (...args: unknown[]) => void> {
  const write =
    (level: ConsoleLevel) =>
    (...args: unknown[]): void => {
      const entry = { level, text: formatWithOptions({ depth: 4, breakLength: 120 }, ...args) };
      const invocation = current();
      if (invocation) invocation.addLog(entry);
      else atLoad(entry);
    };
  const log = write("log");
  return {
    log,
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    debug: write("debug"),
    trace: write("debug"),
    dir: (value: unknown) => log(value),
    table: (value: unknown) => log(value),
  };
}
