import { createHmac } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// One secret resolver for every command: --secret > --secret-file > WEBHOOK_SECRET > config sharedSecret,
// and an empty secret from any of them is a usage error naming where it came from.
const { dir, file, ndjson } = tempDir("webhook-cli-secrets-");
const { server } = closeServersAfterEach();
const hmac = (secret: string, body: Buffer): string => createHmac("sha1", secret).update(body).digest("hex");
const TRACK = JSON.stringify({ version: 1, type: "track", userId: "u_1", event: "Signed Up", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });

/** A subdirectory holding a config file, which `send` reads by default there. */
function configDir(name: string, config: Record<string, unknown>): string {
  const sub = join(dir, name);
  mkdirSync(sub, { recursive: true });
  writeFileSync(join(sub, "webhook-cli.json"), JSON.stringify(config));
  return sub;
}

describe("an empty secret is a usage error naming its source (send)", () => {
  it.each([
    ["--secret", ["--secret", ""], {}, /^error: --secret: the secret is empty$/m],
    ["--secret-file", ["--secret-file", "empty.txt"], {}, /^error: empty\.txt: --secret-file: the secret file is empty$/m],
    ["a --secret-file holding only a newline", ["--secret-file", "newline.txt"], {}, /^error: newline\.txt: --secret-file: the secret file is empty$/m],
    ["WEBHOOK_SECRET", [], { WEBHOOK_SECRET: "" }, /^error: \$WEBHOOK_SECRET: the secret is empty$/m],
  ] as const)("%s", async (_, args, env, message) => {
    file("empty.txt", "");
    file("newline.txt", "\n");
    const s = await server();
    const result = await runInProcess(["send", "--type", "track", "--url", s.url, ...args], { cwd: dir, env });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
    expect(s.requests).toHaveLength(0);
  });

  it("config sharedSecret", async () => {
    const cwd = configDir("empty-config", { sharedSecret: "" });
    const s = await server();
    const result = await runInProcess(["send", "--type", "track", "--url", s.url], { cwd });
    expect(result.stderr).toMatch(/^error: .*webhook-cli\.json: key "sharedSecret": the secret is empty$/m);
    expect(result.code).toBe(2);
    expect(s.requests).toHaveLength(0);
  });

  it("an empty WEBHOOK_SECRET is refused even when a config holds a secret", async () => {
    const cwd = configDir("config-and-empty-env", { sharedSecret: "from-config" });
    const s = await server();
    const result = await runInProcess(["send", "--type", "track", "--url", s.url], { cwd, env: { WEBHOOK_SECRET: "" } });
    expect(result.stderr).toMatch(/\$WEBHOOK_SECRET: the secret is empty/);
    expect(result.code).toBe(2);
    expect(s.requests).toHaveLength(0);
  });
});

describe("the secret's precedence: --secret > --secret-file > WEBHOOK_SECRET > config", () => {
  const cwd = (): string => configDir("precedence", { sharedSecret: "from-config" });
  it.each([
    ["--secret", ["--secret", "from-flag"], { WEBHOOK_SECRET: "from-env" }, "from-flag"],
    ["--secret-file (one trailing newline stripped)", ["--secret-file", "../secret.txt"], { WEBHOOK_SECRET: "from-env" }, "from-file"],
    ["WEBHOOK_SECRET", [], { WEBHOOK_SECRET: "from-env" }, "from-env"],
    ["config sharedSecret", [], {}, "from-config"],
  ] as const)("%s", async (_, args, env, secret) => {
    file("secret.txt", "from-file\n");
    const s = await server();
    const result = await runInProcess(["send", "--type", "track", "--url", s.url, ...args], { cwd: cwd(), env });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/no secret/);
    const body = s.requests[0]?.body ?? Buffer.alloc(0);
    expect(s.requests[0]?.headers["x-signature"]).toBe(hmac(secret, body));
  });
});

describe("unsigned only with no secret at all, said once", () => {
  it("send without any secret: no X-Signature, one warning on stderr, exit 0", async () => {
    const s = await server();
    const input = ndjson([TRACK, TRACK]);
    const result = await runInProcess(["send", input, "--url", s.url], { cwd: dir });
    expect(result.code).toBe(0);
    expect(s.requests).toHaveLength(2);
    for (const request of s.requests) expect(request.headers["x-signature"]).toBeUndefined();
    expect(result.stderr.match(/warning: no secret given \(--secret, --secret-file, \$WEBHOOK_SECRET or the config's sharedSecret\)/g)).toHaveLength(1);
  });
});

describe("every command refuses an empty secret with exit 2", () => {
  it.each([
    ["listen", ["listen", "--port", "0", "--secret", ""], {}, /--secret: the secret is empty/],
    ["listen (WEBHOOK_SECRET)", ["listen", "--port", "0"], { WEBHOOK_SECRET: "" }, /\$WEBHOOK_SECRET: the secret is empty/],
    ["listen (--secret-file)", ["listen", "--port", "0", "--secret-file", "empty.txt"], {}, /empty\.txt: --secret-file: the secret file is empty/],
    ["replay", ["replay", "REPLAY_INPUT", "--url", "http://127.0.0.1:9/", "--secret", ""], {}, /--secret: the secret is empty/],
    ["serve", ["serve", "--port", "0", "--memory", "--secret", ""], {}, /--secret: the secret is empty/],
    ["serve (WEBHOOK_SECRET)", ["serve", "--port", "0", "--memory"], { WEBHOOK_SECRET: "" }, /\$WEBHOOK_SECRET: the secret is empty/],
    [
      "audience sync",
      ["audience", "sync", "--name", "vip", "--members", "members.txt", "--state", "state.json", "--url", "http://127.0.0.1:9/", "--secret-file", "empty.txt"],
      {},
      /empty\.txt: --secret-file: the secret file is empty/,
    ],
  ] as const)("%s", async (_, args, env, message) => {
    file("empty.txt", "");
    file("members.txt", "u_1\n");
    const input = ndjson([TRACK]);
    const result = await runInProcess(
      args.map((a) => (a === "REPLAY_INPUT" ? input : a)),
      { cwd: dir, env },
    );
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
    expect(result.stdout).not.toMatch(/Listening on/);
  });
});
