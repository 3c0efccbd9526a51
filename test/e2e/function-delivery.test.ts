import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { send } from "../../src/cli/commands/send/index.js";
import { VirtualClock } from "../../src/util/clock.js";
import { fakeIo, jsonEvents, runInProcess, startInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// `send --function` and `replay --function` (docs/functions.md#as-a-destination): a destination
// function as a delivery target of the one engine, its outcomes in results, dead letters, JUnit,
// summaries and exit codes, its requests shown and sent to --function-egress.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURES = join(ROOT, "fixtures/functions");
const { dir, file, ndjson } = tempDir("webhook-cli-function-delivery-");
const { server } = closeServersAfterEach();
let ids = 0;
/** A complete message, as send and replay check them (docs/messages.md). */
const message = (fields: Record<string, unknown>): string =>
  JSON.stringify({ version: 1, messageId: `m-${++ids}`, timestamp: "2024-05-01T12:00:00.000Z", ...fields });
const run = (args: string[], input?: string) => runInProcess(args, { cwd: dir, ...(input !== undefined ? { input } : {}) });

// Posts every track to its settings' URL; rejects a track without a userId; skips identify; no other handler.
file(
  "dest.js",
  [
    "async function onTrack(event, settings) {",
    "  if (!event.userId) throw new InvalidEventPayload('userId is required')",
    "  const response = await fetch(settings.url + '/track', { method: 'post', body: JSON.stringify({ e: event.event }) })",
    "  console.log('answered', response.status)",
    "  return { event: event.event, status: response.status }",
    "}",
    "async function onIdentify() { throw new EventNotSupported('identify is not sent') }",
  ].join("\n"),
);

describe("send --function", () => {
  it("runs the example on a generated event, its request sent to a listen with the secret, which takes it as valid", async () => {
    const listen = startInProcess(["listen", "--port", "0", "--secret", "s3cret", "--json"], { cwd: dir });
    const [, url] = await listen.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
    const args = ["send", "--type", "track", "--event", "Order Completed", "--user-id", "u_42", "--function", join(FIXTURES, "slack-alert.js")];
    const result = await run([...args, "--settings", join(FIXTURES, "slack-settings.json"), "--function-egress", `${url}/slack`, "--secret", "s3cret"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^✓ --type track u_42 → function:\S+slack-alert\.js onTrack delivered, 1 attempt, \d+ms\n {4}returned: \{"posted":true,"status":200\}\n {4}console\.log: Slack answered 200\n/,
    );
    expect(result.stdout).toContain(`fetch POST https://hooks.slack.com/services/T0000/B0000/XXXXXXXX → 200 (`);
    expect(result.stdout).toContain(`sent to ${url}/slack)`);
    expect(result.stdout).toMatch(/1 message: 1 delivered, 0 failed, 0 retried\n$/);
    // Nothing is signed for a function, so no warning about it either.
    expect(result.stderr).toBe("");
    listen.stop();
    const arrived = jsonEvents((await listen.done).stdout, "request");
    expect(arrived).toHaveLength(1);
    expect(arrived[0]).toMatchObject({ method: "POST", path: "/slack", signatureValid: true });
  });

  it("each of the seven example types: handled, skipped with its reason, or rejected (exit 1); --json and JUnit carry the skips", async () => {
    const hook = await server();
    const events = (await run(["generate"])).stdout;
    const json = await run(["send", "-", "--function", "dest.js", "--settings", JSON.stringify({ url: hook.url }), "--json", "--junit", "send.xml"], events);
    expect(json.code).toBe(0);
    const deliveries = jsonEvents(json.stdout, "delivery");
    expect(deliveries.map((d) => [d["type"], d["delivered"], d["skipped"] ?? false])).toEqual([
      ["page", false, true],
      ["screen", false, true],
      ["identify", false, true],
      ["track", true, false],
      ["alias", false, true],
      ["group", false, true],
      ["delete", false, true],
    ]);
    const track = deliveries[3] as {
      urls: { invocation: { handler: string; returned: unknown; fetches: { method: string; url: string; status: number }[] } }[];
    };
    expect(track.urls[0]?.invocation).toMatchObject({
      handler: "onTrack",
      returned: { status: 200 },
      fetches: [{ method: "POST", url: `${hook.url}/track`, status: 200 }],
    });
    expect(jsonEvents(json.stdout, "summary")[0]).toMatchObject({ messages: 7, delivered: 1, skipped: 6, failed: 0, notDelivered: 0 });
    const junit = readFileSync(join(dir, "send.xml"), "utf8");
    expect(junit).toContain('tests="7" failures="0" errors="0" skipped="6"');
    expect(junit).toContain('<skipped message="function:dest.js: no onPage handler"/>');
    expect(junit).toContain('<skipped message="function:dest.js: EventNotSupported: identify is not sent"/>');

    const input = [message({ type: "track", anonymousId: "x", event: "x", properties: {} }), message({ type: "page", userId: "p", properties: {} })].join("\n");
    const human = await run(["send", "-", "--function", "dest.js", "--settings", JSON.stringify({ url: hook.url })], input);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("✗ stdin:1 track x → function:dest.js onTrack failed: Message Rejected: InvalidEventPayload: userId is required, 1 attempt");
    expect(human.stdout).toContain("- stdin:2 page p → function:dest.js skipped: no onPage handler, 1 attempt");
    expect(human.stdout).toMatch(/2 messages: 0 delivered, 1 skipped, 1 failed, 0 retried\n$/);
  });

  it("RetryError is retried on the destination's schedule (virtual time), each failed attempt shown with what it did", async () => {
    const retry = file("retry.js", "let n = 0; async function onTrack() { n += 1; console.log('try', n); if (n < 3) throw new RetryError('busy'); return n }");
    const io = fakeIo({ cwd: dir });
    const code = await send({ type: "track", function: retry }, io, { clock: new VirtualClock(0, { autoAdvance: true }), random: () => 1 });
    expect(code).toBe(0);
    expect(io.out()).toMatch(/✓ --type track \S+ → function:\S+retry\.js onTrack delivered, 3 attempts, \d+ms\n {4}returned: 3\n {4}console\.log: try 3\n/);
  });

  it("a package the function uses that is not installed stops the run there: exit 2 naming it, the rest not sent", async () => {
    const lodash = file("lodash-fn.js", "async function onTrack(e) { return _.isString(e.event) }");
    const input = [
      message({ type: "track", userId: "a", event: "x", properties: {} }),
      message({ type: "track", userId: "b", event: "y", properties: {} }),
    ].join("\n");
    const result = await run(["send", "-", "--function", lodash], input);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /error: \S+lodash-fn\.js: `_` is lodash 4\.17\.19 in the service's runtime, and it is not installed here .*npm install --save-dev lodash@4\.17\.19/,
    );
    expect(result.stdout).toContain("2 messages: 0 delivered, 0 failed, 0 retried, 2 not delivered (interrupted)");
  });

  it("a config webhook may be a function (its file and settings from the config's directory), beside a URL: each message goes to both", async () => {
    const hook = await server();
    mkdirSync(join(dir, "conf"), { recursive: true });
    file("conf/notify.js", "async function onTrack(event, settings) { return { to: settings.team } }");
    file("conf/notify-settings.json", '{"team":"growth"}');
    file("conf/webhook-cli.json", JSON.stringify({ webhooks: [{ url: `${hook.url}/hook` }, { function: "notify.js", settings: "notify-settings.json" }] }));
    const result = await run(["send", "--type", "track", "--config", join("conf", "webhook-cli.json"), "--json"]);
    expect(result.code).toBe(0);
    const [delivery] = jsonEvents(result.stdout, "delivery") as { urls: { url: string; status: number; invocation?: { returned: unknown } }[] }[];
    expect(delivery?.urls.map((url) => [url.url, url.status])).toEqual([
      [`${hook.url}/hook`, 200],
      ["function:notify.js", 200],
    ]);
    expect(delivery?.urls[1]?.invocation?.returned).toEqual({ to: "growth" });
    expect(hook.requests).toHaveLength(1);
    file("conf/both.json", JSON.stringify({ webhooks: [{ url: `${hook.url}/hook`, function: "notify.js" }] }));
    const both = await run(["send", "--type", "track", "--config", join("conf", "both.json")]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/both\.json: key "webhooks\[0\]\.url": "url" does not go with a "function"/);
  });

  it("bad input exits 2 with a clear message, and nothing is sent", async () => {
    const hook = await server();
    file("broken.js", "async function onTrack(event) {\n  return event..type\n}\n");
    file("source.js", "async function onRequest() {}");
    file("none.js", "const x = 1");
    file("no-batch.js", "async function onTrack() {}");
    const cases: [string[], RegExp][] = [
      [["--function", "broken.js"], /error: broken\.js:2:16: SyntaxError: Unexpected token '\.'/],
      [["--function", "none.js"], /error: none\.js: no handler: a destination function defines onTrack/],
      [["--function", "source.js"], /error: source\.js: is a source function \(onRequest\): deliver to a destination function/],
      [["--function", "no-batch.js", "--settings", "[1]"], /error: --settings: settings must be a JSON object, not an array/],
      [["--function", "no-batch.js", "--batch-size", "5"], /error: --batch-size: no-batch\.js has no onBatch handler/],
      [["--function", "no-batch.js", "--url", hook.url], /give --url or --function, not both/],
      [["--settings", "{}", "--url", hook.url], /error: --settings: --settings goes with --function/],
      [["--function-egress", `${hook.url}/x`, "--url", hook.url], /error: --function-egress: --function-egress applies to a destination function's requests/],
      [["--function", "missing.js"], /error: missing\.js: .*(no such file|not found|ENOENT)/i],
    ];
    for (const [args, message] of cases) {
      const result = await run(["send", "--type", "track", ...args]);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(hook.requests).toHaveLength(0);
  });
});

describe("replay --function", () => {
  const recording = ndjson([
    message({ type: "track", userId: "a", event: "Signed Up", properties: {} }),
    message({ type: "identify", userId: "a", traits: {} }),
    message({ type: "track", event: "Anonymous", anonymousId: "x", properties: {} }),
    message({ type: "page", userId: "b", properties: {} }),
    message({ type: "track", userId: "b", event: "Order Completed", properties: { total: 10 } }),
  ]);

  it("regression-tests two versions of a function: --results, then --compare names what changed (return, request, skip); exit 1", async () => {
    const hook = await server();
    const settings = JSON.stringify({ url: hook.url });
    const v1 = await run([
      "replay",
      recording,
      "--function",
      "dest.js",
      "--settings",
      settings,
      "--results",
      "v1.ndjson",
      "--dead-letter",
      "dead.ndjson",
      "--junit",
      "v1.xml",
    ]);
    expect(v1.code).toBe(1);
    expect(v1.stdout).toContain("5 messages: 2 delivered, 2 skipped, 1 failed, 0 retried");
    const lines = readFileSync(join(dir, "v1.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.line, line.delivered, line.skipped ?? false])).toEqual([
      [1, true, false],
      [2, false, true],
      [3, false, false],
      [4, false, true],
      [5, true, false],
    ]);
    expect(lines[0].urls[0]).toMatchObject({
      url: "function:dest.js",
      status: 200,
      contentType: "application/json",
      body: '{"event":"Signed Up","status":200}',
      function: { handler: "onTrack", fetches: [{ method: "POST", url: `${hook.url}/track`, status: 200 }] },
    });
    expect(lines[1].urls[0]).toMatchObject({
      status: null,
      skipped: "EventNotSupported: identify is not sent",
      function: { handler: "onIdentify", errorType: "Unsupported Event Type" },
    });
    expect(lines[2].urls[0]).toMatchObject({ status: 400, error: "Message Rejected: InvalidEventPayload: userId is required" });
    // Only the rejected event is a dead letter; the skipped ones are done.
    const dead = readFileSync(join(dir, "dead.ndjson"), "utf8").trim().split("\n");
    expect(dead.map((line) => JSON.parse(line).line ?? JSON.parse(line).body?.event)).toHaveLength(1);
    expect(readFileSync(join(dir, "v1.xml"), "utf8")).toContain('tests="5" failures="1" errors="0" skipped="2"');

    // Version 2 returns another value, posts elsewhere and now handles identify.
    file(
      "dest-v2.js",
      [
        "async function onTrack(event, settings) {",
        "  if (!event.userId) throw new InvalidEventPayload('userId is required')",
        "  const response = await fetch(settings.url + '/v2/track', { method: 'post', body: JSON.stringify({ e: event.event }) })",
        "  return { event: event.event, status: response.status, version: 2 }",
        "}",
        "async function onIdentify() { return 'sent' }",
      ].join("\n"),
    );
    const same = await run(["replay", recording, "--function", "dest.js", "--settings", settings, "--compare", "v1.ndjson"]);
    expect(same.stdout).toContain("5 same");
    const v2 = await run(["replay", recording, "--function", "dest-v2.js", "--settings", settings, "--compare", "v1.ndjson", "--junit", "v2.xml"]);
    expect(v2.code).toBe(1);
    expect(v2.stdout).toContain(`line 1 (track Signed Up, a): request 1: POST ${hook.url}/track → 200 → POST ${hook.url}/v2/track → 200`);
    expect(v2.stdout).toContain("line 1 (track Signed Up, a): body $.version: (absent) → 2");
    expect(v2.stdout).toContain("line 2 (identify, a): skipped (EventNotSupported: identify is not sent) → status 200");
    expect(v2.stdout).not.toContain("line 3 ");
    expect(v2.stdout).not.toContain("line 4 ");
  });

  it("onBatch gets the events in batches of --batch-size; each event's answer is its own result line", async () => {
    const batch = file(
      "batch.js",
      [
        "async function onTrack() { return 'single' }",
        "async function onBatch(events) {",
        "  console.log('batch of', events.length)",
        "  return events.map((e) => (e.userId ? { status: 200 } : { status: 400, errormessage: 'no userId' }))",
        "}",
      ].join("\n"),
    );
    const result = await run(["replay", recording, "--function", batch, "--batch-size", "2", "--results", "batch.ndjson", "--verbose"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("5 messages: 4 delivered, 1 failed, 0 retried");
    expect(result.stderr.match(/console\.log: batch of \d/g)?.sort()).toEqual([
      "console.log: batch of 1",
      "console.log: batch of 2",
      "console.log: batch of 2",
    ]);
    const lines = readFileSync(join(dir, "batch.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.line, line.delivered, line.urls[0].function.handler])).toEqual([
      [1, true, "onBatch"],
      [2, true, "onBatch"],
      [3, false, "onBatch"],
      [4, true, "onBatch"],
      [5, true, "onBatch"],
    ]);
    expect(lines[2].urls[0].error).toBe("Bad Request: status 400: no userId");
  });
});

describe("demo --function", () => {
  it("each example type through the function; its request arrives at the demo's receiver verified; skips are no failure", async () => {
    const fn = file("demo-fn.js", "async function onTrack(e) { await fetch('https://api.example.com/t', { method: 'POST', body: e.event }); return 'sent' }");
    const human = await run(["demo", "--function", fn]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /✓ track → onTrack delivered \(\d+ms\)\n {4}returned: "sent"\n {4}fetch POST https:\/\/api\.example\.com\/t → 200 \(\d+ms, sent to http:\/\/127\.0\.0\.1:\d+\/egress\)\n {4}arrived: POST \/egress, X-Signature verified\n/,
    );
    expect(human.stdout).toContain("- page → skipped: no onPage handler");
    expect(human.stdout).toMatch(/7 messages: 1 delivered, 6 skipped, 0 failed\n$/);
    const failing = file("demo-fail.js", "async function onIdentify() { throw new ValidationError('no email') }");
    const json = await run(["demo", "--function", failing, "--json"]);
    expect(json.code).toBe(1);
    expect(jsonEvents(json.stdout, "summary")[0]).toMatchObject({ sent: 7, delivered: 0, skipped: 6, failed: 1, exitCode: 1 });
    expect((await run(["demo", "--settings", "{}"])).code).toBe(2);
  });
});
