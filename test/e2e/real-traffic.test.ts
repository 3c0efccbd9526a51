import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { sign } from "../../src/signing/x-signature.js";
import { runInProcess, startInProcess, type InProcessResult, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// Real-traffic payloads (fixtures/real-traffic, docs/messages.md#accepted-messages) through the commands.
const SECRET = "e2e-real-traffic";
const { dir } = tempDir("real-traffic-e2e-");
const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/real-traffic/${name}`, import.meta.url), "utf8");
/** Each real message once, compact, as a receiver would get it. */
const MESSAGES: string[] = [
  ...["track-anonymous-v2.json", "screen-server-side.json", "identify-offset.json", "page-named.json"].map((name) => JSON.stringify(JSON.parse(fixture(name)))),
  ...fixture("group-alias.ndjson").trim().split("\n"),
];

async function start(args: string[]): Promise<{ run: InProcessRun; url: string; done: Promise<InProcessResult> }> {
  const run = startInProcess(args);
  const [, url] = await run.waitFor(/(?:Listening on |"url":")(http[^"\s]+)/, 15_000);
  return { run, url: url as string, done: run.done };
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: response.statusCode, text: await response.body.text() };
}

const basic = { authorization: `Basic ${Buffer.from("wk_real:").toString("base64")}` };

describe("real traffic through the commands", () => {
  it("listen over HTTP accepts every real message (version 2, null userId, server-side screen, offsets) and exits 0", async () => {
    const listen = await start(["listen", "--port", "0", "--secret", SECRET, "--count", String(MESSAGES.length)]);
    for (const body of MESSAGES) expect((await post(`${listen.url}/hook`, body, { "x-signature": sign(SECRET, body) })).status).toBe(200);
    const result = await listen.done;
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`Summary: ${MESSAGES.length} requests, ${MESSAGES.length} valid, 0 invalid`);
    // The two unknown keys of page-named.json are warnings, not errors.
    expect(result.stdout).toMatch(/page {2}user_1234 .*\(\+2 unknown keys\)/);
  });

  it("replay delivers them to listen, which exits 0", async () => {
    const file = join(dir, "real.ndjson");
    writeFileSync(file, `${MESSAGES.join("\n")}\n`);
    const listen = await start(["listen", "--port", "0", "--secret", SECRET, "--count", String(MESSAGES.length)]);
    const replayed = await runInProcess(["replay", file, "--url", `${listen.url}/hook`, "--secret", SECRET, "--retry-window", "5s"]);
    expect(replayed.code, replayed.stderr).toBe(0);
    const result = await listen.done;
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain(`Summary: ${MESSAGES.length} requests, ${MESSAGES.length} valid, 0 invalid`);
  });

  it("serve → listen --strict: the documented batch and the real messages as calls arrive whole; only the really invalid calls are dropped", async () => {
    const record = join(dir, "forwarded.ndjson");
    const expected = 6 + MESSAGES.length;
    const listen = await start(["listen", "--port", "0", "--secret", SECRET, "--strict", "--count", String(expected), "--record", record]);
    const serve = await start(["serve", "--port", "0", "--write-key", "wk_real", "--url", `${listen.url}/hook`, "--secret", SECRET, "--memory", "--json"]);

    const documented = await post(`${serve.url}/v1/batch`, fixture("tracking-api-batch.json"), basic);
    expect(documented).toEqual({ status: 200, text: '{"success":true}' });
    const calls = await post(`${serve.url}/v1/batch`, JSON.stringify({ batch: MESSAGES.map((m) => JSON.parse(m)) }), basic);
    expect(calls.status).toBe(200);

    const listened = await listen.done;
    expect(listened.code, listened.stdout).toBe(0);
    expect(listened.stdout).toContain(`Summary: ${expected} requests, ${expected} valid, 0 invalid`);
    const health = (await (await fetch(`${serve.url}/health`)).json()) as Record<string, number>;
    expect(health).toMatchObject({ accepted: expected, rejected: 2 });

    const forwarded = readFileSync(record, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { body: Record<string, unknown> }).body);
    const page = forwarded.find((m) => m["type"] === "page" && m["name"] === "Pricing");
    expect(page).toMatchObject({
      userId: "user_1234",
      category: "Docs",
      messageId: "ajs-f8ca1e4de5024d9430b3928bd8ac6b96",
      timestamp: "2024-06-01T12:30:00.000Z",
    });
    const anonymous = forwarded.find((m) => m["event"] === "Course Clicked");
    expect(anonymous).toMatchObject({ anonymousId: "507f191e810c19729de860ea", integrations: {}, sentAt: "2024-01-01T00:00:00.200Z" });
    expect(anonymous).not.toHaveProperty("userId");
    for (const message of forwarded) expect(message["messageId"], JSON.stringify(message)).toEqual(expect.any(String));

    serve.run.stop("SIGINT");
    const stopped = await serve.done;
    const rejected = stopped.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((e) => e["event"] === "rejected");
    expect(rejected.map((e) => e["index"])).toEqual([6, 7]);
    expect(stopped.stderr).toMatch(/rejected batch\[6\] \(default\): missing required key "event"/);
    expect(stopped.stderr).toMatch(/rejected batch\[7\] \(default\): missing required key "userId" \(or "anonymousId"\)/);
  });

  it("what generate prints passes listen --strict (also --pretty through send -) and serve, whose forwards pass listen --strict", async () => {
    const generated = await runInProcess(["generate", "--seed", "7"]);
    const lines = generated.stdout.trim().split("\n");
    const pretty = await runInProcess(["generate", "--seed", "7", "--pretty"]);
    const calls = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((m) => m["type"] !== "delete");
    const expected = lines.length + calls.length;
    const listen = await start(["listen", "--port", "0", "--secret", SECRET, "--strict", "--count", String(expected)]);
    const sent = await runInProcess(["send", "-", "--url", `${listen.url}/hook`, "--secret", SECRET], { input: pretty.stdout });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain(`${lines.length} messages: ${lines.length} delivered, 0 failed`);

    const serve = await start(["serve", "--port", "0", "--url", `${listen.url}/hook`, "--secret", SECRET, "--memory", "--strict"]);
    // serve --strict: one invalid call would refuse the request with 400.
    expect(await post(`${serve.url}/v1/batch`, JSON.stringify({ batch: calls }), basic)).toEqual({ status: 200, text: '{"success":true}' });
    const listened = await listen.done;
    expect(listened.code, listened.stdout).toBe(0);
    expect(listened.stdout).toContain(`Summary: ${expected} requests, ${expected} valid, 0 invalid`);
  });

  it("send --raw and replay --raw deliver bodies that are not messages (nor JSON), signed exactly as read", async () => {
    const file = join(dir, "bad.txt");
    writeFileSync(file, "this is {not json\n");
    const lines = join(dir, "bad.ndjson");
    writeFileSync(lines, `${JSON.stringify({ type: "track", userId: "u" })}\nnot json either\n`);
    const record = join(dir, "raw.ndjson");
    const listen = await start(["listen", "--port", "0", "--secret", SECRET, "--count", "3", "--record", record]);
    const sent = await runInProcess(["send", file, "--raw", "--url", `${listen.url}/hook`, "--secret", SECRET]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stderr).toMatch(/not valid JSON .*sent whole, as read \(--raw\)/);
    const replayed = await runInProcess(["replay", lines, "--raw", "--concurrency", "1", "--url", `${listen.url}/hook`, "--secret", SECRET]);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stderr).toMatch(/bad\.ndjson:2: not JSON.*\(sent as read: --raw\)/);
    // The receiver sees the bytes, correctly signed, and judges the shapes invalid: that is the point of --raw.
    const result = await listen.done;
    expect(result.code).toBe(1);
    const recorded = readFileSync(record, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { signatureValid: boolean; body: unknown; rawBody?: string });
    const bytes = recorded.map((r) => (r.rawBody !== undefined ? Buffer.from(r.rawBody, "base64").toString("utf8") : JSON.stringify(r.body)));
    expect(bytes).toEqual(["this is {not json\n", JSON.stringify({ type: "track", userId: "u" }), "not json either"]);
    expect(recorded.every((r) => r.signatureValid)).toBe(true);
    // Without --raw, both are refused before anything is sent.
    expect((await runInProcess(["send", file, "--url", "http://127.0.0.1:9/hook"])).code).toBe(2);
    expect((await runInProcess(["replay", lines, "--url", "http://127.0.0.1:9/hook"])).code).toBe(2);
  });
});
