#!/usr/bin/env node
// Runs the benchmarks, each in its own process, on Node.js 24 (bench/node24.js finds it) and on the
// Node.js running this (22.13 or later), then prints one summary table per Node.js (each project figure beside its
// reference from the same run: medians with their spread min–max, the ratio and the target) and
// writes it as JSON to bench/out/ (git-ignored). `node bench/run.js NAME...` runs those whose file
// names start with NAME. By default: replay (and replay-actions), listen, startup, serve, functions; `client`,
// `delivery` and `memory` run when named.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findNode24 } from "./node24.js";

const DEFAULT = ["replay", "listen", "startup", "serve", "functions"];
const dir = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const names = wanted.length > 0 ? wanted : DEFAULT;
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.js"))
  .filter((f) => names.some((w) => f.startsWith(w)))
  .sort((a, b) => names.findIndex((w) => a.startsWith(w)) - names.findIndex((w) => b.startsWith(w)));
const out = join(dir, "out");
mkdirSync(out, { recursive: true });

const node24 = findNode24();
const nodes = [...(node24 ? [node24] : []), ...(node24 === process.execPath ? [] : [process.execPath])];
const versionOf = (binary) => spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout.trim();
const versions = new Map(nodes.map((binary) => [binary, versionOf(binary)]));
console.log(`Node.js: ${nodes.map((binary) => `${versions.get(binary)} (${binary})`).join(", ")}`);

const started = new Date();
const rows = [];
let failed = 0;
for (const file of files) {
  for (const binary of nodes) {
    const node = versions.get(binary);
    console.log(`\n=== ${file} on Node.js ${node} ===`);
    const rowsFile = join(out, `.rows-${process.pid}-${file}.json`);
    const t0 = performance.now();
    const result = spawnSync(binary, ["--expose-gc", join(dir, file)], { stdio: "inherit", env: { ...process.env, BENCH_ROWS_FILE: rowsFile } });
    console.log(`(${file} on ${node}: ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    if (result.status !== 0) failed += 1;
    try {
      rows.push(...JSON.parse(readFileSync(rowsFile, "utf8")).map((r) => ({ bench: file, node, ...r })));
      rmSync(rowsFile);
    } catch {
      // A benchmark without summary rows (client, delivery) or one that failed.
    }
  }
}

if (rows.length > 0) {
  const fmt = (v, unit) => (Number.isFinite(v) ? `${v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1)}` : "n/a") + (unit ? ` ${unit}` : "");
  const side = (s, unit) => (s.n > 1 ? `${fmt(s.value)} [${fmt(s.min)}–${fmt(s.max)}] ${unit}` : fmt(s.value, unit));
  const ratioOf = (r) => {
    if (!Number.isFinite(r.ratio)) return "n/a";
    const spread = r.ratioSpread && r.ratioSpread.n > 1 ? ` [${r.ratioSpread.min.toFixed(2)}–${r.ratioSpread.max.toFixed(2)}]` : "";
    return `${r.ratio.toFixed(2)}×${spread}`;
  };
  const header = ["what", "webhook-cli", "reference (same run)", "ratio [per round]", "target", ""];
  console.log(`\n=== summary (${started.toISOString()}; medians [min–max] of interleaved rounds) ===`);
  for (const binary of nodes) {
    const node = versions.get(binary);
    const table = rows
      .filter((r) => r.node === node)
      .map((r) => [
        r.what,
        side(r.project, r.unit),
        `${r.reference.label}: ${side(r.reference, r.unit)}`,
        ratioOf(r),
        r.target,
        r.met === null ? "" : r.met ? "met" : "MISSED",
      ]);
    if (table.length === 0) continue;
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
    const line = (cells) =>
      cells
        .map((c, i) => c.padEnd(widths[i]))
        .join("  ")
        .trimEnd();
    console.log(`\nNode.js ${node}`);
    console.log(line(header));
    for (const cells of table) console.log(line(cells));
  }
  const json = JSON.stringify({ started: started.toISOString(), nodes: [...versions.values()], rows }, null, 2);
  writeFileSync(join(out, "latest.json"), json);
  writeFileSync(join(out, `bench-${started.toISOString().replace(/[:.]/g, "-")}.json`), json);
  console.log(`\n(written to bench/out/latest.json; the whole run took ${((Date.now() - started.getTime()) / 60_000).toFixed(1)} minutes)`);
}
process.exit(failed > 0 ? 1 : 0);
