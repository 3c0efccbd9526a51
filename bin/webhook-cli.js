#!/usr/bin/env node
// The entry. It first refuses a Node.js older than package.json's engines (22.13) with one line and
// exit 2, before anything else loads; so this file keeps to syntax that any Node.js running ES
// modules parses (no static import, no top-level await, no ?.). Then it turns on Node's compile
// cache: compiled code of the modules loaded (the bundle's chunks in dist/cli/, zod's modules for
// the commands that check messages) is kept on disk, so later starts skip compiling them
// (NODE_DISABLE_COMPILE_CACHE=1 turns it off); and it loads the command line.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(`error: webhook-cli needs Node.js 22.13 or later; this is Node.js ${process.version}\n`);
  process.exitCode = 2;
} else {
  import("node:module").then((module) => {
    module.enableCompileCache();
    return import("../dist/cli/main.js");
  });
}
