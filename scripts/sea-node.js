// The Node.js binary `npm run sea` injects the command line into (scripts/build-sea.js): what it is,
// and whether this build can use it. The blob `node --build-sea` makes is read by the binary it is
// injected into, so both must be the same Node.js version; V8's code cache also needs the same
// platform, so a binary that cannot run here (another OS or CPU) gets none.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { dirname, join } from "node:path";

/** @typedef {{ path: string, version: string, platform: string, format: string, native: boolean }} SeaNode */

/** @returns {SeaNode} */
export function checkNode(path) {
  if (!existsSync(path)) fail(`--node ${path}: no such file`);
  const format = binaryFormat(path);
  const ran = spawnSync(path, ["-p", 'process.version + " " + process.platform + "-" + process.arch'], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  if (ran.status === 0) {
    const [version = "", platform = ""] = ran.stdout.trim().split(" ");
    sameVersion(path, version);
    return { path, version, platform, format, native: true };
  }
  // Another platform's binary: its version from the registry package it came in (node-<os>-<cpu>/bin/node), when it did.
  const pkg = packageOf(path);
  if (pkg === undefined) {
    console.warn(`build-sea: cannot run ${path} here to read its version: it must be Node.js ${process.version}, like the Node.js running this build`);
    return { path, version: "(unknown)", platform: format, format, native: false };
  }
  sameVersion(path, `v${pkg.version}`);
  return { path, version: `v${pkg.version}`, platform: pkg.name.replace(/^node-/, ""), format, native: false };
}

function sameVersion(path, version) {
  if (version !== process.version)
    fail(
      `${path} is Node.js ${version}, this build runs on Node.js ${process.version}: both must be the same version (run the build with that Node.js, or give a binary of this one)`,
    );
}

/** ELF (Linux), Mach-O (macOS) or PE (Windows), by the file's first bytes. */
function binaryFormat(path) {
  const head = Buffer.alloc(4);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (head.toString("hex") === "7f454c46") return "ELF";
  if (["feedfacf", "cffaedfe", "cafebabe"].includes(head.toString("hex"))) return "Mach-O";
  if (head.subarray(0, 2).toString("latin1") === "MZ") return "PE";
  fail(`${path} is not an executable this build knows (ELF, Mach-O or PE)`);
}

function packageOf(path) {
  const file = join(dirname(dirname(path)), "package.json");
  if (!existsSync(file)) return undefined;
  const pkg = JSON.parse(readFileSync(file, "utf8"));
  return /^node-[a-z0-9]+-[a-z0-9]+$/.test(pkg.name ?? "") ? pkg : undefined;
}

export function fail(message) {
  console.error(`build-sea: ${message}`);
  process.exit(1);
}
