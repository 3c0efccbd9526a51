#!/usr/bin/env node
// Runs the benchmarks, each in its own process, then prints one summary table (each project figure
// beside its reference from the same run, the ratio and the target) and writes it as JSON to
// bench/out/ (git-ignored). `node bench/run.js NAME...` runs those whose file names start with NAME.
// By default: the issue-14 rows (replay, listen, startup, serve); `client` and `delivery` run when named.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const DEFAULT = ["replay", "listen", "startup", "serve"];
const dir = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const names = wanted.length > 0 ? wanted : DEFAULT;
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.js"))
  .filter((f) => names.some((w) => f.startsWith(w)))
  .sort((a, b) => names.findIndex((w) => a.startsWith(w)) - names.findIndex((w) => b.startsWith(w)));
const out = join(dir, "out");
mkdirSync(out, { recursive: true });
const started = new Date();
const rows = [];
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const rowsFile = join(out, `.rows-${process.pid}-${file}.json`);
  const t0 = performance.now();
  const result = spawnSync(process.execPath, ["--expose-gc", join(dir, file)], { stdio: "inherit", env: { ...process.env, BENCH_ROWS_FILE: rowsFile } });
  console.log(`(${file}: ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  if (result.status !== 0) failed += 1;
  try {
    rows.push(...JSON.parse(readFileSync(rowsFile, "utf8")).map((r) => ({ bench: file, ...r })));
    rmSync(rowsFile);
  } catch {
    // A benchmark without summary rows (client, delivery) or one that failed.
  }
}

if (rows.length > 0) {
  const fmt = (v, unit) => (Number.isFinite(v) ? `${v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1)} ${unit}` : "n/a");
  const table = rows.map((r) => [
    r.what,
    `${fmt(r.project.value, r.unit)}`,
    `${r.reference.label}: ${fmt(r.reference.value, r.unit)}`,
    Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}×` : "n/a",
    r.target,
    r.met === null ? "" : r.met ? "met" : "MISSED",
  ]);
  const header = ["what", "webhook-cli", "reference (same run)", "ratio", "target", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  console.log(`\n=== summary (${started.toISOString()}) ===`);
  console.log(line(header));
  for (const cells of table) console.log(line(cells));
  const json = JSON.stringify({ started: started.toISOString(), node: process.version, rows }, null, 2);
  writeFileSync(join(out, "latest.json"), json);
  writeFileSync(join(out, `bench-${started.toISOString().replace(/[:.]/g, "-")}.json`), json);
  console.log(`\n(written to bench/out/latest.json)`);
}
process.exit(failed > 0 ? 1 : 0);
