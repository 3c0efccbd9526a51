import { execFile } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const child = fileURLToPath(new URL("../helpers/queue-gc-child.mjs", import.meta.url));
const queueModule = pathToFileURL(fileURLToPath(new URL("../../dist/serve/queue/durable-queue.js", import.meta.url))).href;

// A native object freed at the wrong time aborts the whole process (a SQLite addon once did on
// Node.js 24: "Assertion failed: (env) != nullptr"), which no in-process test would survive to report.
describe("the SQLite queue's native objects", () => {
  it("survive V8 collecting garbage after queues are used, closed and dropped", async () => {
    const { stdout, stderr } = await run(process.execPath, ["--expose-gc", child, queueModule]);
    expect(stderr).toBe("");
    expect(stdout.trim()).toBe("survived 2000000 objects; damaged database: StateError");
  });
});
