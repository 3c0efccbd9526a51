import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Child-process and server tests share two cores; forks keep them isolated from the runner.
    pool: "forks",
    // A worker runs file after file without starting a process and importing the sources anew for
    // each: a third less CPU for the suite. Tests leave no process-wide state behind: commands run in
    // process with their own environment, cwd, streams and stop signal (test/helpers/run-cli.ts),
    // and a file stops what it starts.
    isolate: false,
  },
});
