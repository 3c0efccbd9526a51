import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// Every file an option names is a regular file under its documented bound (docs/security.md#files-named-by-options),
// else exit 2 naming the flag and the file, with nothing sent and nothing started. Before, a device was read
// to its end (/dev/zero: past 1.5 GB in 8 s) and a file of any size was read whole.

const { dir } = tempDir("webhook-cli-option-files-");
const MIB = 1024 * 1024;
const URL_ARGS = ["--url", "http://127.0.0.1:9/hook"];
// listen started by mistake ends by itself: the old code's runs end too, so they fail rather than hang.
const LISTEN = ["listen", "--port", "0", "--exit-after", "2s"];

/** A flag, the command line that gives it FILE, and the most it reads. */
const OPTIONS: [flag: string, args: (file: string) => string[], bound: number][] = [
  ["--secret-file", (f) => ["send", "--type", "track", ...URL_ARGS, "--dry-run", "--secret-file", f], MIB],
  ["--config", (f) => ["send", "--type", "track", "--dry-run", "--config", f], MIB],
  ["--ca", (f) => ["send", "--type", "track", ...URL_ARGS, "--dry-run", "--ca", f], MIB],
  ["--secret-file", (f) => [...LISTEN, "--secret-file", f], MIB],
  ["--responses", (f) => [...LISTEN, "--responses", f], 8 * MIB],
  ["--respond-body", (f) => [...LISTEN, "--respond-body", `@${f}`], 8 * MIB],
  ["--tls-cert", (f) => [...LISTEN, "--tls-cert", f, "--tls-key", "small.pem"], MIB],
  ["--tls-key", (f) => [...LISTEN, "--tls-cert", "small.pem", "--tls-key", f], MIB],
  ["--tls-cert", (f) => ["serve", "--port", "0", "--memory", "--tls-cert", f, "--tls-key", "small.pem"], MIB],
  ["--from", (f) => ["expect", "--from", f, "--timeout", "100ms"], MIB],
];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

describe("a file an option names", () => {
  writeFileSync(join(dir, "small.pem"), "-----BEGIN CERTIFICATE-----\n");

  it.each(OPTIONS)("%s: a device is refused at once (exit 2), nothing started", async (flag, args) => {
    const result = await runInProcess(args("/dev/null"), { cwd: dir });
    expect(result.stderr).toBe(`error: /dev/null: ${flag}: not a regular file (a pipe, a device or a directory): give a file\n`);
    expect(result).toMatchObject({ code: 2, stdout: "" });
  });

  it.each(OPTIONS)("%s: a file past its bound is refused (exit 2), naming the bound", async (flag, args, bound) => {
    const name = `over-${bound}.txt`;
    // Plausible content, so that only the size is wrong: a certificate, JSON, a URL, a secret.
    writeFileSync(join(dir, name), `-----BEGIN CERTIFICATE-----\n${"a".repeat(bound)}`);
    const result = await runInProcess(args(name), { cwd: dir });
    // (--config's errors name the file by its full path, as its other errors do.)
    expect(result.stderr).toMatch(
      new RegExp(`^error: (\\S+/)?${escapeRegExp(name)}: ${flag}: the file is over ${bound / MIB} MiB, the most this option reads\\n$`),
    );
    expect(result).toMatchObject({ code: 2, stdout: "" });
  });

  it("at its bound is read as before", async () => {
    writeFileSync(join(dir, "secret-at-bound.txt"), `${"s".repeat(MIB - 1)}\n`);
    const result = await runInProcess(["send", "--type", "track", ...URL_ARGS, "--dry-run", "--secret-file", "secret-at-bound.txt"], { cwd: dir });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/X-Signature: [0-9a-f]{40}/);
  });
});
