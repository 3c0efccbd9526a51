#!/usr/bin/env node
// Runs every bench/*.bench.js in turn (or those named on the command line), each in its own process.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const dir = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.js"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const result = spawnSync(process.execPath, ["--expose-gc", join(dir, file)], { stdio: "inherit" });
  if (result.status !== 0) failed += 1;
}
process.exit(failed > 0 ? 1 : 0);
