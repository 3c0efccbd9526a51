/** What ended a listen run: --count requests, --exit-after, or a signal (Ctrl-C, SIGTERM). */
export type StopReason = "count" | "exit-after" | "signal";

export interface StopSwitch {
  stopped: Promise<StopReason>;
  stop(reason: StopReason): void;
}

export function stopSwitch(): StopSwitch {
  let stop: (reason: StopReason) => void = () => {};
  const stopped = new Promise<StopReason>((resolveStop) => (stop = resolveStop));
  return { stopped, stop: (reason) => stop(reason) };
}

/** Waits for --count (through the switch), --exit-after or a signal, whichever comes first. */
export async function untilStopped(stopper: StopSwitch, exitAfterMs: number | undefined, signal: AbortSignal): Promise<StopReason> {
  const exitTimer = exitAfterMs !== undefined ? setTimeout(() => stopper.stop("exit-after"), exitAfterMs) : undefined;
  const onSignal = (): void => stopper.stop("signal");
  if (signal.aborted) stopper.stop("signal");
  else signal.addEventListener("abort", onSignal, { once: true });
  try {
    return await stopper.stopped;
  } finally {
    if (exitTimer) clearTimeout(exitTimer);
    signal.removeEventListener("abort", onSignal);
  }
}
