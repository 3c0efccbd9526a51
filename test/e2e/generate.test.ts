import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkMessage } from "../../src/messages/check.js";
import { runInProcess } from "../helpers/run-cli.js";

const NOW = "2012-12-02T00:30:08.276Z";

describe("webhook-cli generate", () => {
  it("prints all seven types as valid NDJSON by default", async () => {
    const result = await runInProcess(["generate"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    const messages = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(messages.map((m) => m["type"])).toEqual(["page", "screen", "identify", "track", "alias", "group", "delete"]);
    for (const message of messages) expect(checkMessage(message, { strict: true }).errors).toEqual([]);
  });

  it("is deterministic with --now and --seed and applies overrides", async () => {
    const args = ["generate", "track", "identify", "--now", NOW, "--seed", "7", "--user-id", "u_42", "--event", "Signed Up", "--traits", '{"vip":true}'];
    const [a, b] = await Promise.all([runInProcess(args), runInProcess(args)]);
    expect(a.stdout).toBe(b.stdout);
    const [track, identify] = a.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(track).toMatchObject({ type: "track", userId: "u_42", event: "Signed Up", timestamp: NOW });
    expect(identify).toMatchObject({ type: "identify", userId: "u_42", traits: { vip: true } });
  });

  it("writes --pretty JSON to --out", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webhook-cli-gen-"));
    const result = await runInProcess(["generate", "delete", "--pretty", "--out", "out.json", "--now", NOW], { cwd: dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    const text = readFileSync(join(dir, "out.json"), "utf8");
    expect(text).toContain('\n  "type": "delete"');
    expect(JSON.parse(text)).toMatchObject({ type: "delete", timestamp: NOW });
  });

  it("camel alias keys", async () => {
    const result = await runInProcess(["generate", "alias", "--alias-keys", "camel"]);
    expect(Object.keys(JSON.parse(result.stdout) as object)).toEqual(["version", "type", "previousId", "userId", "timestamp"]);
  });
});

describe("exit codes and errors", () => {
  it.each([
    [["generate", "purchase"], /unknown message type "purchase"/],
    [["generate", "--seed", "x"], /--seed: invalid value "x"/],
    [["generate", "--properties", "{nope"], /--properties: not valid JSON/],
    [["generate", "--properties", "[1]"], /--properties: expected a JSON object/],
    [["generate", "--now", "someday"], /--now: invalid date "someday"/],
    [["generate", "--alias-keys", "snake"], /--alias-keys: invalid value "snake"/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    [["generate", "--no-such-flag"], /unknown option '--no-such-flag'/],
  ])("%j → exit 2 with a one-line message and no stack", async (args, pattern) => {
    const result = await runInProcess(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(pattern);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("suggests a near command name", async () => {
    const result = await runInProcess(["generat"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Did you mean generate?");
  });

  it("--help and --version exit 0 on stdout", async () => {
    const help = await runInProcess(["generate", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:");
    const version = await runInProcess(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("no arguments prints help and exits 2", async () => {
    const result = await runInProcess([]);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain("Usage: webhook-cli");
  });

  it("an unwritable --out is a usage error naming the file", async () => {
    const result = await runInProcess(["generate", "--out", "/nonexistent-dir/x.ndjson"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("/nonexistent-dir/x.ndjson");
  });
});
