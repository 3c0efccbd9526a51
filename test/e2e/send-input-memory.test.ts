import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BIN, collect, spawnCli } from "../helpers/cli.js";
import { watchRss } from "../helpers/memory.js";
import { jsonEvents } from "../helpers/run-cli.js";
import { killChildrenAfterEach } from "../helpers/setup.js";

// send holds its input to check it whole before sending, so it reads at most 64 MiB of it, from a file,
// a pipe or standard input alike (docs/commands/send.md#input). Measured from the outside: the RSS of
// the built CLI. Before, `send /dev/zero` read on past 1.5 GB in 8 s (a device reports size 0, and was
// read to its end). The limit is 64 MiB held plus Node.js's own ~100 MB, with room to spare: 156 MB
// was measured; the old code passes it within a second, and is killed there.
const RSS_LIMIT_MB = 400;

const children = killChildrenAfterEach();

describe("send reads its input with bounded memory", { tags: ["smoke"] }, () => {
  it("send /dev/zero stops at 64 MiB: exit 2, naming the bound and replay", async () => {
    const child = spawnCli(["send", "/dev/zero", "--url", "http://127.0.0.1:9/hook"]);
    children.push(child);
    const rss = watchRss(child.pid as number, RSS_LIMIT_MB);
    const result = await collect(child, 60_000).finally(() => rss.stop());
    expect(rss.over, `RSS ${Math.round(rss.peak)} MB`).toBe(false);
    expect(result.stderr).toBe("error: /dev/zero: the input is over 64 MiB: send reads it whole; use replay, which streams NDJSON\n");
    expect(result.code).toBe(2);
  }, 90_000);

  it("sign /dev/zero stops at 64 MiB too (its body read as send reads its input): exit 2, naming the bound", async () => {
    const child = spawnCli(["sign", "--scheme", "github", "--secret", "s", "/dev/zero"]);
    children.push(child);
    const rss = watchRss(child.pid as number, RSS_LIMIT_MB);
    const result = await collect(child, 60_000).finally(() => rss.stop());
    expect(rss.over, `RSS ${Math.round(rss.peak)} MB`).toBe(false);
    expect(result.stderr).toBe("error: /dev/zero: the body is over 64 MiB\n");
    expect(result.stdout).toBe("");
    expect(result.code).toBe(2);
  }, 90_000);

  it("a pipe given as FILE (bash process substitution) is still read, every message checked", async () => {
    const script = 'webhook-cli() { node "$WEBHOOK_CLI_BIN" "$@"; }\nwebhook-cli send <(webhook-cli generate) --url http://127.0.0.1:9/hook --dry-run --json';
    const child = spawn("bash", ["--norc", "-c", script], {
      env: { ...process.env, NO_COLOR: "1", CI: "1", WEBHOOK_CLI_BIN: BIN },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    const result = await collect(child, 60_000);
    expect(result.code).toBe(0);
    // generate prints one example of each of the seven types.
    expect(jsonEvents(result.stdout, "request")).toHaveLength(7);
  }, 90_000);
});
