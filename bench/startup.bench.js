// Start-up as a paired run: `webhook-cli --version`, `--help` and `generate`, each in
// turn with `node -e 0` (the floor: Node's own start-up), wall time, medians of 10 pairs.
// Target: each <= 2x `node -e 0`.
import { spawnSync } from "node:child_process";
import { BIN, median, report, row } from "./lib.js";

const PAIRS = Number(process.env.STARTUP_BENCH_PAIRS ?? 10);
const COMMANDS = [["--version"], ["--help"], ["generate"]];

function wallMs(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "ignore"], env: { ...process.env, NO_COLOR: "1" } });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}`);
  return ms;
}

const rows = [];
// One warm-up of each, so the first pair does not pay for a cold file cache.
wallMs(["-e", "0"]);
for (const args of COMMANDS) wallMs([BIN, ...args]);
for (const args of COMMANDS) {
  const own = [];
  const floor = [];
  for (let i = 0; i < PAIRS; i++) {
    // Alternate which goes first within the pair.
    if (i % 2 === 0) {
      floor.push(wallMs(["-e", "0"]));
      own.push(wallMs([BIN, ...args]));
    } else {
      own.push(wallMs([BIN, ...args]));
      floor.push(wallMs(["-e", "0"]));
    }
  }
  const name = `webhook-cli ${args.join(" ")}`;
  const r = row(
    `start-up: ${name} (wall)`,
    { label: name, value: median(own) },
    { label: "node -e 0", value: median(floor) },
    { unit: "ms", target: 2, lowerIsBetter: true },
  );
  rows.push(r);
  console.log(
    `${name.padEnd(24)} ${r.project.value.toFixed(0).padStart(4)} ms vs node -e 0 ${r.reference.value.toFixed(0).padStart(4)} ms: ${r.ratio.toFixed(2)}x (target ≤ 2x)`,
  );
}
report(rows);
