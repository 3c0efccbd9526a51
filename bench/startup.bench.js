// Start-up as a paired run: `webhook-cli --version`, `--help` and `generate`, each in
// turn with `node -e 0` (the floor: Node's own start-up), medians of 10 pairs with their spread.
// The figure is wall time (what a user waits); the process's CPU time (user+sys), which a loaded
// machine disturbs less (decide by it there), is printed beside it with the same target. Both come
// from bash's `time` (wait4's figures, to the millisecond; GNU time rounds CPU to 10 ms), so
// bash's own start is not counted. Target: each <= 2x `node -e 0`.
import { BASH, BIN, report, row, timedStart, withSpread } from "./lib.js";

const PAIRS = Number(process.env.STARTUP_BENCH_PAIRS ?? 10);
const COMMANDS = [["--version"], ["--help"], ["generate"]];
/** One start of Node.js with these arguments (see timedStart). */
const start = (args) => timedStart([process.execPath, ...args]);

const rows = [];
// One warm-up of each, so the first pair does not pay for a cold file cache (nor the compile cache).
start(["-e", "0"]);
for (const args of COMMANDS) start([BIN, ...args]);
console.log(`${PAIRS} pairs each (medians [min–max]); wall and CPU ms${BASH ? " from bash's time" : " (no bash: wall only)"}`);
for (const args of COMMANDS) {
  const own = [];
  const floor = [];
  for (let i = 0; i < PAIRS; i++) {
    // Alternate which goes first within the pair.
    if (i % 2 === 0) {
      floor.push(start(["-e", "0"]));
      own.push(start([BIN, ...args]));
    } else {
      own.push(start([BIN, ...args]));
      floor.push(start(["-e", "0"]));
    }
  }
  const name = `webhook-cli ${args.join(" ")}`;
  const wall = row(
    `start-up: ${name} (wall)`,
    { label: name, values: own.map((s) => s.wall) },
    { label: "node -e 0", values: floor.map((s) => s.wall) },
    { unit: "ms", target: 2, lowerIsBetter: true, paired: true },
  );
  const cpu = row(
    `start-up: ${name} (CPU)`,
    { label: name, values: own.map((s) => s.cpu) },
    { label: "node -e 0", values: floor.map((s) => s.cpu) },
    { unit: "ms", target: 2, lowerIsBetter: true, paired: true },
  );
  rows.push(wall, ...(BASH ? [cpu] : []));
  console.log(
    `${name.padEnd(24)} wall ${withSpread(wall.project, 0)} ms vs node -e 0 ${withSpread(wall.reference, 0)} ms: ${wall.ratio.toFixed(2)}x (target ≤ 2x); CPU ${withSpread(cpu.project, 0)} vs ${withSpread(cpu.reference, 0)} ms: ${cpu.ratio.toFixed(2)}x`,
  );
}
report(rows);
