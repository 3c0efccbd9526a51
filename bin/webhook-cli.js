#!/usr/bin/env node
// Node.js 22.1+ keeps compiled code of the modules loaded (the bundle's chunks in dist/cli/, zod's
// modules for the commands that check messages) in a cache on disk, so later starts skip compiling
// them. A no-op on Node.js 20; NODE_DISABLE_COMPILE_CACHE=1 turns it off. Enabled before the CLI's
// modules load, hence the dynamic import.
import module from "node:module";

module.enableCompileCache?.();
await import("../dist/cli/main.js");
