// Uses and drops SQLite queues the way serve does (listFailed, deletions, a damaged database),
// then, from a timer, has V8 collect them (gc(): started with --expose-gc) and allocates more:
// node:sqlite's databases and statements are native objects, freed when collected, some after
// their database was closed. (A native SQLite addon once aborted Node.js 24 here.) Argument: the queue module's URL.
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
  const queue = await openSqliteQueue(tempDir());
  queue.enqueue([{ body: "{}", source: "web" }], [{ source: "web", userId: "u" }]);
  const [m] = queue.claim(1);
  queue.failed(m.id, { reason: "x", attempts: 1, status: 500 });
  queue.listFailed();
  queue.sourcesThatSaw("u");
  queue.close();
}
const damaged = tempDir();
writeFileSync(join(damaged, "serve.db"), "not a database ".repeat(100));
const refused = await openSqliteQueue(damaged).then(
  () => "opened",
  (error) => error.name,
);
setTimeout(() => {
  globalThis.gc();
  const junk = [];
  for (let i = 0; i < 2e6; i++) junk.push({ i });
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  console.log(`survived ${junk.length} objects; damaged database: ${refused}`);
}, 50);
