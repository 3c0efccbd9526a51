// Uses and drops SQLite queues the way serve does (listFailed, deletions, a damaged database),
// then allocates from a timer so V8 collects them: on Node.js 24 a collected better-sqlite3
// object aborted the process here (src/serve/sqlite-lifetime.ts). Argument: the queue module's URL.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const { openSqliteQueue } = await import(process.argv[2]);
const dirs = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-gc-"));
  dirs.push(dir);
  return dir;
};
for (let round = 0; round < 20; round++) {
  const queue = await openSqliteQueue(tempDir(), { driver: "better-sqlite3" });
  queue.enqueue([{ body: "{}", source: "web" }], [{ source: "web", userId: "u" }]);
  const [m] = queue.claim(1);
  queue.failed(m.id, { reason: "x", attempts: 1, status: 500 });
  queue.listFailed();
  queue.sourcesThatSaw("u");
  queue.close();
}
const damaged = tempDir();
writeFileSync(join(damaged, "serve.db"), "not a database ".repeat(100));
const refused = await openSqliteQueue(damaged, { driver: "better-sqlite3" }).then(
  () => "opened",
  (error) => error.name,
);
setTimeout(() => {
  const junk = [];
  for (let i = 0; i < 2e6; i++) junk.push({ i });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  console.log(`survived ${junk.length} objects; damaged database: ${refused}`);
}, 50);
