import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/setup.js";

// A broken optional install: better-sqlite3 there but its addon not loadable (Node.js 20 without
// node:sqlite). The hint names the rebuild that works: scripts allowed, -g for a global install.
const { dir } = tempDir("webhook-cli-sqlite-hint-");
const BROKEN = { NODE_OPTIONS: `--import ${fileURLToPath(new URL("../helpers/hooks/broken-sqlite.mjs", import.meta.url))}` };

describe("serve with better-sqlite3 installed but not loadable", () => {
  it("exit 2, one line naming the rebuild with install scripts allowed, for a project and a global install, and --memory", async () => {
    const result = await runCli(["serve", "--port", "0", "--state", "state", "--secret", "s3cret"], { cwd: dir, env: BROKEN, timeoutMs: 10_000 });
    // (Node 26 warns that module.register is deprecated: the hook's, not serve's.)
    const errors = result.stderr.split("\n").filter((line) => line.startsWith("error:"));
    expect(errors).toEqual([
      `error: the durable queue's better-sqlite3 cannot be loaded on this Node.js ${process.version} (built for another Node.js, or its install script was skipped): ` +
        "run 'npm rebuild better-sqlite3 --ignore-scripts=false' in the project that installed it ('npm rebuild -g better-sqlite3 --ignore-scripts=false' beside a global install); " +
        "--memory keeps the queue in memory instead",
    ]);
    expect(result.code).toBe(2);
    expect(result.stdout).not.toMatch(/Listening on/);
  });
});
