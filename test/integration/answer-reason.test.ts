import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// A receiver's 4xx comes with its reason (docs/delivery.md#attempt-outcomes), and send and replay
// end with one summary line (docs/cli.md#summary).
const { dir } = tempDir("webhook-cli-answer-reason-");
const { server } = closeServersAfterEach();
const RECORDING = fileURLToPath(new URL("../../fixtures/events.ndjson", import.meta.url));
const SUMMARY = /^(\d+) messages?: (\d+) delivered, (\d+) failed, (\d+) retried$/;
let listen: InProcessRun;
let hook: string;

beforeAll(async () => {
  listen = startInProcess(["listen", "--port", "0", "--secret", "right-secret"], { cwd: dir });
  hook = `${(await listen.waitFor(/Listening on (\S+)/))[1]}/hook`;
});

afterAll(async () => {
  listen.stop("SIGINT");
  await listen.done;
});

const lastLine = (stdout: string): string => stdout.trimEnd().split("\n").at(-1) as string;

describe("a receiver's 4xx, with its reason", () => {
  it("send signed with the wrong secret: listen's 401 comes with listen's own reason; one summary line", async () => {
    const result = await runInProcess(["send", "--type", "track", "--url", hook, "--secret", "wrong-secret"], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ --type track \S+ → \S+\/hook 401 failed, 1 attempt, \d+ms: HTTP 401: \{"error":"X-Signature does not match the body"\}\n/);
    expect(lastLine(result.stdout)).toBe("1 message: 0 delivered, 1 failed, 0 retried");
  });

  it("replay likewise, in its lines and its dead letters; its summary has send's wording", async () => {
    const deadLetter = join(dir, "failed.ndjson");
    const result = await runInProcess(["replay", RECORDING, "--url", hook, "--secret", "wrong-secret", "--dead-letter", deadLetter], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`✗ ${RECORDING}:3 track user_1: HTTP 401: {"error":"X-Signature does not match the body"}\n`);
    const summary = result.stdout.split("\n").find((line) => SUMMARY.test(line));
    expect(summary).toBe("7 messages: 0 delivered, 7 failed, 0 retried");
    const failures = readFileSync(deadLetter, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { failure: unknown }).failure);
    expect(failures).toEqual(Array(7).fill({ reason: 'HTTP 401: {"error":"X-Signature does not match the body"}', attempts: 1, status: 401 }));
    const sent = await runInProcess(["send", RECORDING.replace("events.ndjson", "track.json"), "--url", hook, "--secret", "right-secret"], { cwd: dir });
    expect(lastLine(sent.stdout)).toBe("1 message: 1 delivered, 0 failed, 0 retried");
  });

  it("a hostile answer is shown bounded, on one line, escaped, with credentials and the secret masked", async () => {
    const body = `\x1b[2J\x1b]0;pwned\x07 denied:\nsee https://admin:hunter2@example.com/ and the-shared-secret ${"z".repeat(2000)}`;
    const s = await server((_request, res) => {
      res.writeHead(403, { "content-type": "text/plain" });
      res.end(body);
    });
    const result = await runInProcess(["send", "--type", "page", "--url", s.url, "--secret", "the-shared-secret"], { cwd: dir });
    const line = result.stdout.split("\n")[0] as string;
    expect(line).toMatch(/: HTTP 403: \\e\[2J\\e\]0;pwned\\x07 denied: see https:\/\/admin:\*\*\*@example\.com\/ and \*\*\* z+…$/);
    expect(line.slice(line.indexOf("HTTP 403: ") + "HTTP 403: ".length).length).toBeLessThanOrEqual(201 + 20);
    expect(result.stdout + result.stderr).not.toMatch(/hunter2|the-shared-secret|\x1b/);
  });

  it("a 5xx keeps its status alone (retried, its body is no reason), and an empty 4xx body adds nothing", async () => {
    const s = await server((request, res) => {
      res.writeHead(request.url === "/down" ? 503 : 404);
      res.end(request.url === "/down" ? "<html>maintenance</html>" : "");
    });
    const down = await runInProcess(["send", "--type", "page", "--url", `${s.url}/down`, "--retry-window", "0"], { cwd: dir });
    expect(down.stdout).toMatch(/: HTTP 503(; [^\n]*)?\n/);
    expect(down.stdout).not.toContain("maintenance");
    const missing = await runInProcess(["send", "--type", "page", "--url", `${s.url}/nowhere`], { cwd: dir });
    expect(missing.stdout).toMatch(/: HTTP 404\n/);
  });
});
