/** A terminal's stdin as far as key presses need it (process.stdin when it is a TTY). */
export interface KeyInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/**
 * Calls the handler of each single-key press on a terminal (listen's `r`).
 * Raw mode turns Ctrl-C into a byte instead of a signal, so it is raised as
 * SIGINT again (the normal stop). Returns the function that restores the terminal.
 */
export function watchKeys(input: KeyInput, handlers: Record<string, () => void>, interrupt: () => void = raiseSigint): () => void {
  if (input.isTTY !== true || typeof input.setRawMode !== "function") return () => {};
  input.setRawMode(true);
  const onData = (chunk: Buffer | string): void => {
    for (const key of String(chunk)) {
      if (key === "\u0003") interrupt();
      else handlers[key.toLowerCase()]?.();
    }
  };
  input.on("data", onData);
  input.resume();
  return () => {
    input.off("data", onData);
    input.setRawMode?.(false);
    input.pause();
  };
}

function raiseSigint(): void {
  process.kill(process.pid, "SIGINT");
}
