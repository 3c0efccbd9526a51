import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { collect, runCli, spawnCli, waitForLine } from "../helpers/cli.js";
import { tempDir } from "../helpers/setup.js";

// serve's durable queue is Node's built-in node:sqlite (src/serve/queue/sqlite-database.ts).
describe("serve's SQLite (node:sqlite)", () => {
  const { dir } = tempDir("webhook-cli-serve-sqlite-");

  it("the library loads it only when a durable queue is opened", () => {
    const dist = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
    // openSqliteQueue is internal: imported from its module, beside the library's face.
    const queue = fileURLToPath(new URL("../../dist/serve/queue/durable-queue.js", import.meta.url));
    const script = `
      await import(${JSON.stringify(dist)});
      const lib = await import(${JSON.stringify(queue)});
      const loaded = () => process.moduleLoadList.includes("NativeModule sqlite");
      const before = loaded();
      (await lib.openSqliteQueue(${JSON.stringify(join(dir, "state"))})).close();
      console.log(JSON.stringify({ before, after: loaded() }));`;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(output)).toEqual({ before: false, after: true });
  });

  // Node.js 22.13 and later have it unless started with --no-experimental-sqlite.
  const withoutSqlite = { NODE_OPTIONS: "--no-experimental-sqlite" };

  it("serve on a Node.js started without it: one line naming it and --memory, exit 2", { tags: ["smoke"] }, async () => {
    const result = await runCli(["serve", "--port", "0", "--state", "state", "--secret", "s3cret"], { cwd: dir, env: withoutSqlite, timeoutMs: 10_000 });
    expect(result.stderr).toBe(
      `error: the durable queue needs node:sqlite, which this Node.js (${process.version}) was started without (--no-experimental-sqlite); ` +
        "--memory keeps the queue in memory instead (nothing survives a restart)\n",
    );
    expect(result.code).toBe(2);
    expect(result.stdout).not.toMatch(/Listening on/);
  });

  it("serve --memory does not need it", { tags: ["smoke"] }, async () => {
    const serve = spawnCli(["serve", "--port", "0", "--memory"], { cwd: dir, env: withoutSqlite });
    const done = collect(serve);
    await waitForLine(serve, /Listening on/);
    serve.kill("SIGINT");
    const result = await done;
    expect(result.stderr).not.toMatch(/sqlite|SQLite/);
    expect(result.code).toBe(0);
  });
});
