import { readFileSync } from "node:fs";

/**
 * CPU time (ms) this process spent running `work`: user+sys from the kernel, not the wall clock,
 * so a check that some code runs in linear time holds on a machine loaded by other processes.
 * A vitest worker (pool "forks") runs one file at a time, so nothing else runs in the process meanwhile; it
 * runs file after file (isolate: false), so a garbage collection may still be for an earlier file's objects.
 */
export function cpuMs(work: () => void): number {
  const started = process.cpuUsage();
  work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

/** The same for work that is awaited: every thread of the process counts (zlib's, the sockets'), and nothing else runs in it meanwhile. */
export async function cpuMsAsync(work: () => Promise<unknown>): Promise<number> {
  const started = process.cpuUsage();
  await work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

/** CPU time (ms, user+sys, to the kernel's 10 ms tick) another process has spent so far, from /proc (Linux). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
