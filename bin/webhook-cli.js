#!/usr/bin/env node
// Node.js 22.1+ keeps compiled code of the modules loaded (zod's ~95 above all) in a cache on disk,
// so later starts skip compiling them (generate: 89 → 78 ms on Node 24). A no-op on Node.js 20;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. Enabled before the CLI's modules load, hence the dynamic import.
import module from "node:module";

module.enableCompileCache?.();
await import("../dist/cli/main.js");
