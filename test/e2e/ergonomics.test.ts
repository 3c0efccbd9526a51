import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";
import { statuses } from "../helpers/http-server.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const { dir, ndjson } = tempDir("webhook-cli-ergonomics-");
const { server } = closeServersAfterEach();
const oneLine = (text: string) => text.replace(/\s+/g, " ");
// A reset code (foreground, bold/dim, all) right after a newline.
const RESET_AFTER_NEWLINE = /\n\x1b\[(?:39|22|0)m/;

describe("help and bare invocations", () => {
  it.each([[[]], [["audience"]]])("bare `webhook-cli %s` prints help to stderr and exits 2", async (args) => {
    const result = await runInProcess(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^Usage: webhook-cli/);
  });

  it.each([[["--help"]], [["audience", "--help"]], [["audience", "sync", "--help"]], [["help", "replay"]]])(
    "`%s` prints help to stdout and exits 0",
    async (args) => {
      const result = await runInProcess(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
      expect(result.stdout).toMatch(/^Usage: webhook-cli/);
    },
  );

  it("send --type says it generates one example; replay --type says it filters", async () => {
    const send = oneLine((await runInProcess(["send", "--help"])).stdout);
    const replay = oneLine((await runInProcess(["replay", "--help"])).stdout);
    expect(send).toMatch(/--type <type> generate one example message of this type and send it/);
    expect(replay).toMatch(/--type <type> filter: replay only the recorded messages of this type, skip the rest/);
  });

  it("defaults read `(default: value)`, the secret's variable `$WEBHOOK_SECRET`, and the concurrency defaults say why they differ", async () => {
    const help = (args: string[]) => runInProcess([...args, "--help"]).then((r) => oneLine(r.stdout));
    const [listen, send, replay, audience] = await Promise.all([help(["listen"]), help(["send"]), help(["replay"]), help(["audience", "sync"])]);
    expect(listen).toContain("-p, --port <n> port to listen on (0 = any free port) (default: 8080)");
    expect(listen).toContain("-s, --secret <secret> shared secret (repeatable: any of several is accepted, for key rotation) (env: $WEBHOOK_SECRET)");
    expect(listen).toContain("--scheme <name> require this signature scheme: default (X-Signature), standard, svix, github, stripe, shopify, slack or twilio");
    expect(send).toContain("(default: 5s)");
    expect(send).toContain(
      "-s, --secret <secret> shared secret to sign with (repeatable, for key rotation: standard, svix and stripe sign with each, the others with the first) (env: $WEBHOOK_SECRET)",
    );
    for (const text of [listen, send, replay, audience]) expect(text).not.toMatch(/\(default: "|\(default [^(]| WEBHOOK_SECRET/);
    expect(replay).toMatch(/-c, --concurrency <n> messages in flight at once; .*64 keeps a receiver busy.* \(default: 64\)/);
    expect(audience).toMatch(/-c, --concurrency <n> identify messages in flight at once; lower than replay's 64 because .* \(default: 8\)/);
  });
});

describe("did you mean", () => {
  it("a mistyped message type, as an argument or a flag, is named as typed with the nearest type", async () => {
    const argument = await runInProcess(["generate", "trak"]);
    expect(argument.code).toBe(2);
    expect(argument.stderr).toBe(
      'error: unknown message type "trak" (Did you mean track?): expected one of page, screen, identify, track, alias, group, delete\n',
    );
    const flag = await runInProcess(["send", "--type", "indentify", "--url", "http://127.0.0.1:9/hook"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/^error: --type: unknown message type "indentify" \(Did you mean identify\?\)/);
    const replay = await runInProcess(["replay", "-", "--type", "trak", "--url", "http://127.0.0.1:9/hook"], { input: "" });
    expect(replay.stderr).toMatch(/--type: unknown message type "trak" \(Did you mean track\?\)/);
    for (const result of [argument, flag, replay]) expect(result.stderr).not.toMatch(/\[types|\[file|<file|\[FILE/i);
  });

  it("send without input names what to give, not commander's argument", async () => {
    const result = await runInProcess(["send", "--url", "http://127.0.0.1:9/hook"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("error: nothing to send: give a file, - for standard input, or --type TYPE\n");
  });

  it("a mistyped command or shell gets the nearest name", async () => {
    const command = await runInProcess(["replya", "x.ndjson"]);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("(Did you mean replay?)");
    const shell = await runInProcess(["completion", "bsh"]);
    expect(shell.code).toBe(2);
    expect(shell.stderr).toBe('error: unknown shell "bsh" (Did you mean bash?): expected one of bash, zsh, fish\n');
  });
});

describe("short flags", () => {
  it("-p -s on listen, -u -s on send and -o on generate do what the long flags do", async () => {
    const out = await runInProcess(["generate", "track", "-o", "short.ndjson", "--seed", "1"], { cwd: dir });
    expect(out.code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, "short.ndjson"), "utf8"))).toMatchObject({ type: "track" });
    const listen = startInProcess(["listen", "-p", "0", "-s", "s3cret", "--count", "1", "--json"]);
    const [, url] = await listen.waitFor(/"url":"([^"]+)"/);
    const send = await runInProcess(["send", "short.ndjson", "-u", `${url}/hook`, "-s", "s3cret"], { cwd: dir });
    expect(send.code).toBe(0);
    const received = await listen.done;
    expect(received.code).toBe(0);
    expect(received.stdout).toMatch(/"event":"request".*"signatureValid":true/);
  });

  it("-c sets replay's concurrency (a bad value is named by its long flag)", async () => {
    const result = await runInProcess(["replay", "-", "-c", "0", "--url", "http://127.0.0.1:9/hook"], { input: "" });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: --concurrency: invalid value "0"/);
  });
});

describe("colour", () => {
  async function failedSend(env: Record<string, string | undefined>, extra: string[] = []) {
    const s = await server(statuses(400));
    return runInProcess(["send", "--type", "track", "--url", `${s.url}/hook`, "--secret", "s3cret", ...extra], { env });
  }

  it("FORCE_COLOR colours output off a terminal; --no-color wins over it; resets never follow a newline", async () => {
    const forced = await failedSend({ NO_COLOR: undefined, FORCE_COLOR: "1" });
    expect(forced.code).toBe(1);
    expect(forced.stdout).toMatch(/\x1b\[31m✗\x1b\[39m/);
    expect(forced.stdout + forced.stderr).not.toMatch(RESET_AFTER_NEWLINE);
    const noColor = await failedSend({ NO_COLOR: undefined, FORCE_COLOR: "1" }, ["--no-color"]);
    expect(noColor.code).toBe(1);
    expect(noColor.stdout).toContain("✗");
    expect(noColor.stdout + noColor.stderr).not.toContain("\x1b[");
    const plain = await failedSend({ NO_COLOR: "1" });
    expect(plain.stdout + plain.stderr).not.toContain("\x1b[");
  });

  it("--no-color is global: accepted before the command too", async () => {
    const result = await runInProcess(["--no-color", "generate", "page", "--seed", "1"], { env: { NO_COLOR: undefined, FORCE_COLOR: "1" } });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ type: "page" });
  });
});

describe("replay --dry-run", () => {
  it("prints each exact request, as send --dry-run does, and sends nothing; --quiet prints only the counts", async () => {
    const s = await server();
    const body = '{"version":1,"type":"track","userId":"u1","event":"E","properties":{},"timestamp":"2024-01-01T00:00:00.000Z"}';
    const input = ndjson([body, '{"version":1,"type":"page","userId":"u2","name":"Home","properties":{},"timestamp":"2024-01-01T00:00:00.000Z"}']);
    const result = await runInProcess(["replay", input, "--dry-run", "--type", "track", "-u", `${s.url}/hook`, "-s", "s3cret"]);
    expect(result.code).toBe(0);
    const signature = createHmac("sha1", "s3cret").update(body).digest("hex");
    expect(result.stdout).toContain(`POST ${s.url}/hook\nUser-Agent: Segment.io/1.0\nContent-Type: application/json\nX-Signature: ${signature}\n\n${body}\n`);
    expect(result.stdout).not.toContain('"type":"page"');
    expect(result.stdout).toContain("dry run: 1 message would be sent (2 lines, 1 filtered out)");
    const quiet = await runInProcess(["replay", input, "--dry-run", "--quiet", "-u", `${s.url}/hook`, "-s", "s3cret"]);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toBe("dry run: 2 messages would be sent (2 lines)\n");
    const noUrl = await runInProcess(["replay", input, "--dry-run"]);
    expect(noUrl.code).toBe(0);
    expect(noUrl.stdout).toBe("dry run: 2 messages would be sent (2 lines)\n");
    const quietAlone = await runInProcess(["replay", input, "--quiet", "-u", `${s.url}/hook`]);
    expect(quietAlone.code).toBe(2);
    expect(quietAlone.stderr).toBe("error: --quiet: only goes with --dry-run (it prints the counts instead of the requests)\n");
    expect(s.requests).toHaveLength(0);
  });
});
