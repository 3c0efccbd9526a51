import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { functionRun } from "../../src/cli/commands/function/index.js";
import { InputError } from "../../src/errors.js";
import { verify } from "../../src/signing/x-signature.js";
import { VirtualClock } from "../../src/util/clock.js";
import { fakeIo, jsonEvents, runInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// `webhook-cli function run` end to end, in process (docs/commands/function.md), on the example
// functions shipped in fixtures/functions/ and on functions written in each test.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURES = join(ROOT, "fixtures/functions");
const { dir, file } = tempDir("webhook-cli-function-");
file("events.txt", '{"type":"track"}\n[1]\n');
const { server } = closeServersAfterEach();
const run = (args: string[], input?: string) => runInProcess(["function", "run", ...args], { cwd: dir, ...(input !== undefined ? { input } : {}) });

describe("webhook-cli function run: destination", () => {
  it("runs the example on a generated event with egress to a local receiver, signed with the secret, and shows what happened", async () => {
    const slack = await server();
    const result = await run([
      join(FIXTURES, "slack-alert.js"),
      "--type",
      "track",
      "--event",
      "Order Completed",
      "--user-id",
      "u_42",
      "--settings",
      join(FIXTURES, "slack-settings.json"),
      "--function-egress",
      `${slack.url}/slack`,
      "--secret",
      "s3cret",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^✓ onTrack: --type track u_42 → delivered \(\d+ms\)\n {4}returned: \{"posted":true,"status":200\}\n {4}console\.log: Slack answered 200\n/,
    );
    expect(result.stdout).toContain(`fetch POST https://hooks.slack.com/services/T0000/B0000/XXXXXXXX → 200 (`);
    expect(result.stdout).toContain(`sent to ${slack.url}/slack)`);
    expect(result.stdout).toMatch(/1 event: 1 delivered, 0 skipped, 0 failed, 0 to be retried\n$/);
    const [request] = slack.requests;
    expect(request?.headers["x-function-fetch-url"]).toBe("https://hooks.slack.com/services/T0000/B0000/XXXXXXXX");
    expect(JSON.parse(request?.body.toString() ?? "")).toMatchObject({ channel: "#sales", text: expect.stringMatching(/^u_42 completed an order: /) });
    expect(verify("s3cret", request?.body ?? "", request?.headers["x-signature"])).toBe(true);
  });

  it("events as send reads them: each to its handler, skipped ones named; a rejected one exits 1; --json has every invocation", async () => {
    const fn = file("dest.js", "async function onTrack(e) { if (!e.properties.email) throw new InvalidEventPayload('email is required'); return 'ok' }");
    const events = [
      { type: "track", userId: "a", event: "A", properties: { email: "a@x.test" } },
      { type: "identify", userId: "b", traits: {} },
      { type: "track", userId: "c", event: "C", properties: {} },
    ];
    const text = events.map((event) => JSON.stringify(event)).join("\n");
    const human = await run([fn, "-"], text);
    expect(human.code).toBe(1);
    expect(human.stdout.split("\n").filter((line) => !line.startsWith("    "))).toEqual([
      expect.stringMatching(/^✓ onTrack: stdin:1 track a → delivered/),
      expect.stringMatching(/^- \(no handler\): stdin:2 identify b → skipped \(Unsupported Event Type\): no onIdentify handler/),
      expect.stringMatching(/^✗ onTrack: stdin:3 track c → failed, not retried \(Message Rejected\): InvalidEventPayload: email is required/),
      "3 events: 1 delivered, 1 skipped, 1 failed, 0 to be retried",
      "",
    ]);
    const json = await run([fn, "-", "--json"], text);
    expect(
      jsonEvents(json.stdout, "invocation").map((event) => [event["handler"], (event["outcome"] as { kind: string }).kind, event["returned"] ?? null]),
    ).toEqual([
      ["onTrack", "delivered", "ok"],
      [null, "skipped", null],
      ["onTrack", "failed", null],
    ]);
    expect(jsonEvents(json.stdout, "summary")).toEqual([
      { event: "summary", kind: "destination", invocations: 3, delivered: 1, skipped: 1, failed: 1, retry: 0, interrupted: false },
    ]);
  });

  it("with onBatch, events go in batches of --batch-size, and only the events its answer failed count as failed", async () => {
    const fn = file(
      "batch.js",
      "async function onTrack() {}\nasync function onBatch(events) { return events.map((e) => ({ status: e.userId === 'bad' ? 500 : 200 })) }",
    );
    const text = ["a", "bad", "c"].map((userId) => JSON.stringify({ type: "track", userId, event: "E" })).join("\n");
    const result = await run([fn, "-", "--batch-size", "2", "--json"], text);
    expect(result.code).toBe(1);
    const batches = jsonEvents(result.stdout, "invocation");
    expect(batches.map((batch) => (batch["events"] as { outcome: { kind: string } }[]).map((event) => event.outcome.kind))).toEqual([
      ["delivered", "retry"],
      ["delivered"],
    ]);
    expect(jsonEvents(result.stdout, "summary")[0]).toMatchObject({ delivered: 2, retry: 1 });
  });

  it("a handler that never settles is stopped at the 5 s limit, to be retried (exit 1), in virtual time", async () => {
    const fn = file("slow.js", "async function onTrack() { await new Promise(() => {}) }");
    const clock = new VirtualClock(0, { autoAdvance: true });
    const io = fakeIo({ env: { NO_COLOR: "1" }, cwd: dir });
    const code = await functionRun({ file: fn, type: "track" }, io, { clock });
    expect(code).toBe(1);
    expect(io.out()).toMatch(/^! onTrack: --type track \S+ → to be retried \(Timeout\): did not finish within 5 s \(the service's limit\)/);
    expect(clock.now()).toBe(5000);
  });

  it("a throw of a non-Error is reported as what it is", async () => {
    const result = await run([file("str.js", "async function onTrack() { throw 'rate limited' }"), "--type", "track"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('failed, not retried (Bad Request): threw a string, not an Error: "rate limited"');
  });
});

describe("webhook-cli function run: source", () => {
  it("runs the example on its test request: the calls it makes are shown", async () => {
    const result = await run([join(FIXTURES, "github-source.js"), "--request", join(FIXTURES, "github-issue-opened.json"), "--json"]);
    expect(result.code).toBe(0);
    const [invocation] = jsonEvents(result.stdout, "invocation");
    expect(invocation).toMatchObject({
      handler: "onRequest",
      input: { request: { method: "POST", url: "https://fn.segmentapis.com/?source=github" } },
      outcome: { kind: "delivered" },
      messages: [{ type: "track", event: "issues opened", userId: "5150", properties: { repository: "acme/storefront", login: "ada" } }],
      objects: [{ collection: "issues", id: "2611458093", properties: { title: "Webhook retries stop after one hour", state: "open" } }],
    });
  });

  it("--settings replaces the request file's: a wrong webhook secret is a ValidationError (exit 1)", async () => {
    const result = await run([
      join(FIXTURES, "github-source.js"),
      "--request",
      join(FIXTURES, "github-issue-opened.json"),
      "--settings",
      '{"webhookSecret":"x"}',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("failed, not retried (Message Rejected): ValidationError: X-Hub-Signature-256 does not match the body");
  });
});

describe("webhook-cli function run: bad input exits 2 with one clear line, and runs nothing", () => {
  it.each([
    [
      "a syntax error, with line and column",
      ["syntax.js", "// fine\nasync function onTrack(e) {\n  return e..type\n}"],
      ["--type", "track"],
      /^error: syntax\.js:3:12: SyntaxError: Unexpected token '\.'\n$/,
    ],
    ["no handler", ["none.js", "function handle() {}"], ["--type", "track"], /^error: none\.js: no handler: a destination function defines onTrack/],
    [
      "settings that are not an object",
      ["ok.js", "async function onTrack() {}"],
      ["--type", "track", "--settings", "[1]"],
      /^error: --settings: settings must be a JSON object, not an array\n$/,
    ],
    ["an unreadable function file", null, ["--type", "track"], /^error: missing\.js: cannot read: no such file \(ENOENT\)$/m],
    [
      "settings from a device",
      ["ok3.js", "async function onTrack() {}"],
      ["--type", "track", "--settings", "/dev/zero"],
      /^error: \/dev\/zero: --settings: not a regular file/,
    ],
    ["a source function without --request", ["src.js", "async function onRequest() {}"], [], /give it a test request with --request FILE/],
    ["an event that is not a JSON object", ["ok2.js", "async function onTrack() {}"], ["events.txt"], /^error: events\.txt:2: an event is a JSON object\n$/],
  ] as const)("%s", async (_, written, args, stderr) => {
    const fn = written ? file(written[0], written[1]) : join(dir, "missing.js");
    const result = await run([written ? written[0] : "missing.js", ...args]);
    expect({ code: result.code, stderr: result.stderr, stdout: result.stdout }).toEqual({ code: 2, stderr: expect.stringMatching(stderr), stdout: "" });
    expect(fn).toBeTruthy();
  });

  it("a function file that is a device is refused before it is read", async () => {
    const result = await run(["/dev/zero", "--type", "track"]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 2,
      stderr: "error: /dev/zero: not a regular file (a pipe, a device or a directory): give a file\n",
    });
  });

  it("a package the function uses that is not installed: named, with the command to install it", async () => {
    const result = await run([file("lodash.js", "async function onTrack(e) { return _.get(e, 'userId') }"), "--type", "track"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: \S+lodash\.js: `_` is lodash 4\.17\.19 in the service's runtime, and it is not installed here \(looked from .*\): npm install --save-dev lodash@4\.17\.19\n$/,
    );
  });

  it("the library's API throws the same errors as values", () => {
    expect(new InputError("x", { file: "f.js", line: 3, column: 12 }).describe()).toBe("f.js:3:12: x");
  });
});
