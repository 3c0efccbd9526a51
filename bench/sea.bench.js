// The single executable (`npm run sea`: build/sea/webhook-cli) beside the package's command line,
// `node bin/webhook-cli.js` on the Node.js running this benchmark (run it with the Node.js that built
// the executable, so both are the same Node.js): start-up of `--version`, `--help` and `generate` as
// interleaved pairs (which goes first alternates), medians [min–max] of wall and CPU ms from bash's
// `time`, then peak RSS (GNU time, medians of 5) and the sizes. No target: it shows what one file
// costs. Not in the default set: `npm run build && npm run sea && node bench/sea.bench.js`.
// It runs a copy of the executable, as a download or an install leaves one: the file as
// `node --build-sea` wrote it shows ~30 MB more peak RSS on Linux (more of its pages mapped from the
// page cache at once; the same bytes, the same CPU time).
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { BASH, BIN, median, report, shownRow, TIME, timedStart, withSpread } from "./lib.js";

const BUILT = fileURLToPath(new URL("../build/sea/webhook-cli", import.meta.url));
const SEA = join(mkdtempSync(join(tmpdir(), "webhook-cli-sea-bench-")), "webhook-cli");
const PAIRS = Number(process.env.SEA_BENCH_PAIRS ?? 20);
const COMMANDS = [["--version"], ["--help"], ["generate"]];
if (!existsSync(BUILT)) {
  console.error(`${BUILT} is missing: npm run sea first`);
  process.exit(1);
}
copyFileSync(BUILT, SEA);
process.on("exit", () => rmSync(dirname(SEA), { recursive: true, force: true }));

/** Peak RSS in MB of one run of `argv`, from GNU time. */
function peakMb(argv) {
  const result = spawnSync(TIME, ["-f", "%M", ...argv], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  return Number(result.stderr.trim().split("\n").at(-1)) / 1024;
}

const rows = [];
const sea = (args) => [SEA, ...args];
const pkg = (args) => [process.execPath, BIN, ...args];
// One warm-up of each: the first pair pays for no cold file cache, nor the package's compile cache.
for (const args of COMMANDS) {
  timedStart(sea(args));
  timedStart(pkg(args));
}
console.log(`Node.js ${process.version}; ${PAIRS} pairs each (medians [min–max]); wall and CPU ms${BASH ? " from bash's time" : " (no bash: wall only)"}`);
for (const args of COMMANDS) {
  const one = [];
  const other = [];
  for (let i = 0; i < PAIRS; i++) {
    // Alternate which goes first within the pair.
    const first = i % 2 === 0;
    if (first) one.push(timedStart(sea(args)));
    other.push(timedStart(pkg(args)));
    if (!first) one.push(timedStart(sea(args)));
  }
  const name = `webhook-cli ${args.join(" ")}`;
  const reference = "node bin/webhook-cli.js";
  const wall = shownRow(
    `single executable: ${name} (wall)`,
    { label: name, values: one.map((s) => s.wall) },
    { label: reference, values: other.map((s) => s.wall) },
    { unit: "ms", paired: true },
  );
  const cpu = shownRow(
    `single executable: ${name} (CPU)`,
    { label: name, values: one.map((s) => s.cpu) },
    { label: reference, values: other.map((s) => s.cpu) },
    { unit: "ms", paired: true },
  );
  rows.push(wall, ...(BASH ? [cpu] : []));
  console.log(
    `${name.padEnd(24)} wall ${withSpread(wall.project, 0)} ms vs ${withSpread(wall.reference, 0)} ms: ${wall.ratio.toFixed(2)}x; CPU ${withSpread(cpu.project, 0)} vs ${withSpread(cpu.reference, 0)} ms: ${cpu.ratio.toFixed(2)}x`,
  );
  if (TIME) {
    const peaks = (argv) => median(Array.from({ length: 5 }, () => peakMb(argv)));
    const peak = shownRow(
      `single executable: ${name} (peak RSS)`,
      { label: name, value: peaks(sea(args)) },
      { label: reference, value: peaks(pkg(args)) },
      { unit: "MB" },
    );
    rows.push(peak);
    console.log(`${"".padEnd(24)} peak RSS ${peak.project.value.toFixed(0)} MB vs ${peak.reference.value.toFixed(0)} MB`);
  }
}
const size = statSync(SEA).size / 1e6;
const gzipped = gzipSync(readFileSync(SEA), { level: 9 }).length / 1e6;
console.log(
  `size: ${size.toFixed(1)} MB (${gzipped.toFixed(1)} MB gzip -9); the Node.js binary running this: ${(statSync(process.execPath).size / 1e6).toFixed(1)} MB`,
);
report(rows);
