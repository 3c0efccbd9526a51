import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteQueue } from "../../src/serve/queue/durable-queue.js";
import { MemoryQueue } from "../../src/serve/queue/memory-queue.js";
import type { MessageQueue } from "../../src/serve/queue/message-queue.js";
import { loadSqlite } from "../../src/serve/queue/sqlite-database.js";

const dirs: string[] = [];
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-queue-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const bodies = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ body: `{"n":${from + i}}`, source: "web" }));

const queues: [string, (dir: string) => Promise<MessageQueue>][] = [
  ["sqlite", (dir) => openSqliteQueue(dir)],
  ["memory", async () => new MemoryQueue()],
];

describe.each(queues)("%s queue", (_name, open) => {
  it("hands out pending messages oldest first, each once per queue object", async () => {
    const queue = await open(stateDir());
    queue.enqueue(bodies(5));
    const first = queue.claim(3);
    expect(first.map((m) => m.body)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    queue.enqueue(bodies(1, 5));
    expect(queue.claim(10).map((m) => m.body)).toEqual(['{"n":3}', '{"n":4}', '{"n":5}']);
    expect(queue.claim(10)).toEqual([]);
    expect(queue.pendingCount()).toBe(6);
    queue.delivered(first[0]!.id);
    queue.failed(first[1]!.id, { reason: "http://x: status 400", attempts: 1, status: 400 });
    queue.flush();
    expect(queue.pendingCount()).toBe(4);
    expect(queue.failedCount()).toBe(1);
    expect(queue.listFailed()).toEqual([
      expect.objectContaining({ id: first[1]!.id, body: '{"n":1}', failure: { reason: "http://x: status 400", attempts: 1, status: 400 } }),
    ]);
    queue.close();
  });

  it("remembers which sources have seen a user", async () => {
    const queue = await open(stateDir());
    queue.enqueue(
      [],
      [
        { source: "web", userId: "u1" },
        { source: "ios", userId: "u1" },
        { source: "web", userId: "u2" },
      ],
    );
    queue.enqueue(bodies(1), [{ source: "web", userId: "u1" }]);
    expect(queue.sourcesThatSaw("u1")).toEqual(["ios", "web"]);
    expect(queue.sourcesThatSaw("u2")).toEqual(["web"]);
    expect(queue.sourcesThatSaw("nobody")).toEqual([]);
    queue.close();
  });
});

describe("sqlite queue durability", () => {
  it("keeps what was not acknowledged across a reopen, with first-attempt times and the failed table", async () => {
    const dir = stateDir();
    const queue = await openSqliteQueue(dir);
    queue.enqueue(bodies(4), [{ source: "web", userId: "u9" }]);
    const [a, b, c] = queue.claim(3);
    queue.delivered(a!.id);
    queue.failed(b!.id, { reason: "gave up", attempts: 3, status: 503 });
    queue.recordFirstAttempts(new Map([[c!.id, 1_700_000_000_000]]));
    queue.close();

    const reopened = await openSqliteQueue(dir);
    expect(reopened.pendingCount()).toBe(2);
    expect(reopened.failedCount()).toBe(1);
    const pending = reopened.claim(10);
    expect(pending.map((m) => [m.body, m.firstAttemptAt])).toEqual([
      ['{"n":2}', 1_700_000_000_000],
      ['{"n":3}', undefined],
    ]);
    expect(reopened.listFailed()[0]).toMatchObject({ body: '{"n":1}', failure: { reason: "gave up", attempts: 3, status: 503 } });
    expect(reopened.sourcesThatSaw("u9")).toEqual(["web"]);
    reopened.close();
  });

  it("batches acknowledgements: written by the next tick without an explicit flush", async () => {
    const dir = stateDir();
    const queue = await openSqliteQueue(dir);
    queue.enqueue(bodies(3));
    for (const message of queue.claim(3)) queue.delivered(message.id);
    await new Promise((resolve) => setImmediate(resolve));
    const other = await openSqliteQueue(dir);
    expect(other.pendingCount()).toBe(0);
    other.close();
    queue.close();
  });
});

describe("the database as the queue uses it (src/serve/queue/sqlite-database.ts)", () => {
  it("prepares a statement once per SQL text, and a transaction that throws leaves nothing behind", async () => {
    const db = (await loadSqlite())(":memory:");
    const first = db.statement("SELECT 1 AS x");
    expect(db.statement("SELECT 1 AS x")).toBe(first);
    expect(db.statement("SELECT 2 AS x")).not.toBe(first);
    expect(first.get()).toEqual({ x: 1 });
    db.exec("CREATE TABLE t (n INTEGER)");
    const insert = db.statement<[number]>("INSERT INTO t (n) VALUES (?)");
    const insertBoth = db.transaction((a: number, b: number) => {
      insert.run(a);
      if (b < 0) throw new Error("refused");
      insert.run(b);
    });
    insertBoth(1, 2);
    expect(() => insertBoth(3, -1)).toThrow("refused");
    expect(db.statement("SELECT n FROM t ORDER BY n").all()).toEqual([{ n: 1 }, { n: 2 }]);
    db.close();
  });
});
