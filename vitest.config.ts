import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The one way a test waits for something to happen: `await expect.poll(() => value).toBe(...)`, retried
    // every 50 ms. 10 s, not vitest's 1 s: on two shared cores a server or a child may be slow to get there,
    // and a wait is not a verdict (a test never passes by waiting less).
    expect: { poll: { timeout: 10_000 } },
    // Child-process and server tests share two cores; forks keep them isolated from the runner.
    pool: "forks",
    // A worker runs file after file without starting a process and importing the sources anew for
    // each: a third less CPU for the suite. Tests leave no process-wide state behind: commands run in
    // process with their own environment, cwd, streams and stop signal (test/helpers/run-cli.ts),
    // and a file stops what it starts.
    isolate: false,
    // `npx vitest run --tags-filter=smoke`: every test that starts the built CLI (bin/webhook-cli.js) as a
    // process, for what only a real process shows (the entry and the modules it loads, exit statuses,
    // signals, a terminal, memory, the durable queue across a SIGKILL, the Node.js it runs on). Tag the
    // test, or its describe, that spawns it. .ci/run runs the set on Node.js 22, the whole suite on 24 and 26.
    tags: [{ name: "smoke", description: "starts the built CLI (bin/webhook-cli.js) as a process" }],
  },
});
