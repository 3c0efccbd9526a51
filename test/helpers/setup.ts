import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach } from "vitest";
import { startServer, type Responder, type TestServer } from "./http-server.js";

/**
 * Closes, after each test, the servers pushed to `servers` or started with
 * `server(respond)`. Call once at a test file's top level.
 */
export function closeServersAfterEach(): { servers: TestServer[]; server: (respond?: Responder) => Promise<TestServer> } {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return {
    servers,
    server: async (respond) => {
      const s = await startServer(respond);
      servers.push(s);
      return s;
    },
  };
}

/**
 * Kills, after each test, the child processes pushed to the returned list that
 * are still running, so a failed test leaves no CLI behind. Call once at a test
 * file's top level.
 */
export function killChildrenAfterEach(): ChildProcess[] {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return children;
}

/**
 * A fresh temporary directory, with writers of test input files into it, removed after the
 * file's (or the describe block's) tests. Call at a test file's top level or in a describe.
 */
export function tempDir(prefix: string): { dir: string; file: (name: string, text: string) => string; ndjson: (lines: string[]) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let count = 0;
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  return { dir, file, ndjson: (lines) => file(`in-${count++}.ndjson`, `${lines.join("\n")}\n`) };
}
