import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Collector } from "../../src/serve/collector.js";
import { openSqliteQueue } from "../../src/serve/queue/durable-queue.js";
import { listenCollector } from "../../src/serve/server.js";
import type { SqlDatabase } from "../../src/serve/queue/sqlite-database.js";
import { runInProcess } from "../helpers/run-cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-serve-storage-"));
  dirs.push(dir);
  return dir;
};
// SQLite answers SQLITE_FULL past max_page_count, exactly as on a full disk: a full disk without root or a tmpfs.
const databaseOf = (queue: unknown) => (queue as { db: SqlDatabase }).db;
const fill = (db: SqlDatabase) => db.exec(`PRAGMA max_page_count = ${(db.statement("PRAGMA page_count").get() as { page_count: number }).page_count}`);

describe("serve on a full disk", () => {
  it("a timer-driven write that fails is kept and retried; ingest answers 503 meanwhile", async () => {
    const errors: string[] = [];
    const queue = await openSqliteQueue(tempDir(), { onStorageError: (error) => errors.push((error as { code?: string }).code ?? error.message) });
    queue.enqueue([{ body: "{}", source: "s" }]);
    const [message] = queue.claim(10);
    const db = databaseOf(queue);
    fill(db);
    // Giving up moves the (large) row to `failed`: new pages, on a full disk. Written from a timer, not the caller.
    queue.failed(message!.id, { reason: "x".repeat(200_000), attempts: 3, status: 500 });
    await expect.poll(() => errors.length).toBeGreaterThan(0);
    expect(errors).toContain("SQLITE_FULL");

    const collector = new Collector({
      settings: { targets: [], secret: undefined, secrets: [], userAgent: "t", aliasKeys: "spec", enabled: true, sources: [] },
      queue,
    });
    const server = await listenCollector(collector, { host: "127.0.0.1", port: 0 });
    const big = JSON.stringify({
      batch: Array.from({ length: 20 }, () => ({ type: "track", userId: "u", event: "E", properties: { pad: "y".repeat(20_000) } })),
    });
    const refused = await fetch(`${server.url}/v1/batch`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from("k:").toString("base64")}` },
      body: big,
    });
    expect(`${refused.status} ${await refused.text()}`).toMatch(/^503 /);

    db.exec("PRAGMA max_page_count = 1073741823");
    // The retry comes from the queue's own timer: wait for it, not for a guessed time.
    // Read the table directly: listFailed() would write the pending rows itself.
    await expect.poll(() => (db.statement("SELECT COUNT(*) AS n FROM failed").get() as { n: number }).n).toBeGreaterThan(0);
    expect(queue.listFailed().map((failed) => failed.id)).toEqual([message!.id]);
    await server.close();
    await collector.close();
  });
});

describe("serve --state problems are one line and exit 2", () => {
  const problems: [string, (dir: string) => string][] = [
    [
      "a file",
      (dir) => {
        writeFileSync(join(dir, "state"), "x");
        return join(dir, "state");
      },
    ],
    [
      "a directory named serve.db",
      (dir) => {
        mkdirSync(join(dir, "serve.db"));
        return dir;
      },
    ],
    [
      "a corrupt serve.db",
      (dir) => {
        writeFileSync(join(dir, "serve.db"), Buffer.alloc(8192, 7));
        return dir;
      },
    ],
    ["a /proc path", () => "/proc/webhook-cli-state"],
  ];
  it.each(problems)("%s", async (_name, make) => {
    const result = await runInProcess(["serve", "--port", "0", "--state", make(tempDir())]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("--state");
  });

  it("a truncated serve.db", async () => {
    const dir = tempDir();
    const source = join(dir, "source");
    const queue = await openSqliteQueue(source);
    queue.enqueue(Array.from({ length: 200 }, () => ({ body: "z".repeat(2_000), source: "s" })));
    queue.close();
    const target = join(dir, "target");
    mkdirSync(target);
    copyFileSync(join(source, "serve.db"), join(target, "serve.db"));
    writeFileSync(join(target, "serve.db"), readFileSync(join(target, "serve.db")).subarray(0, 10_000));
    const result = await runInProcess(["serve", "--port", "0", "--state", target, "--failed"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/damaged|malformed|not a SQLite database/);
  });

  it("creates the state directory 0700 and the database 0600", async () => {
    const state = join(tempDir(), "nested", "state");
    const result = await runInProcess(["serve", "--port", "0", "--state", state, "--failed"]);
    expect(result.code).toBe(0);
    expect(statSync(state).mode & 0o777).toBe(0o700);
    expect(statSync(join(state, "serve.db")).mode & 0o777).toBe(0o600);
  });
});
