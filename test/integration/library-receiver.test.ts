import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";

// startReceiver as a user of the package writes a test with it (docs/library.md#a-receiver-in-your-tests):
// every name from "webhook-cli" and "webhook-cli/testing", resolved by package name to the built
// dist/ (npm run build); the types from src/, as in engine-public.test.ts. Messages come from
// `webhook-cli send` (in process) and from the Analytics client through `webhook-cli serve`.
type Face = typeof import("../../src/index.js");
type Testing = typeof import("../../src/testing.js");
type TestReceiver = Awaited<ReturnType<Testing["startReceiver"]>>;
const PACKAGE = "webhook-cli";
const SECRET = "library-secret";

let lib: Face;
let testing: Testing;
let receiver: TestReceiver;
let serve: InProcessRun;
let serveUrl: string;

beforeAll(async () => {
  lib = (await import(PACKAGE)) as Face;
  testing = (await import(`${PACKAGE}/testing`)) as Testing;
  receiver = await testing.startReceiver({ secret: SECRET });
  serve = startInProcess(["serve", "--port", "0", "--memory", "--url", `${receiver.url}/segment`, "--secret", SECRET, "--retry-window", "0"]);
  serveUrl = (await serve.waitFor(/Listening on (\S+)/))[1] as string;
});

afterAll(async () => {
  serve.stop("SIGINT");
  await serve.code;
  await receiver.close();
});

beforeEach(() => receiver.reset());

const send = (...args: string[]) => runInProcess(["send", "--url", `${receiver.url}/hooks`, "--secret", SECRET, "--retry-window", "0", ...args]);

describe("a receiver started by the test", () => {
  it("receives what `webhook-cli send` sends, verified, and waitFor finds it", async () => {
    const sent = await send("--type", "track", "--event", "Order Completed", "--user-id", "u_42", "--properties", '{"revenue":42}');
    expect(sent.code).toBe(0);
    const [order] = await receiver.waitFor({ type: "track", event: "Order Completed", userId: "u_42" });
    expect(order?.verdict.signatureValid).toBe(true);
    expect(order).toMatchObject({ index: 1, method: "POST", path: "/hooks", valid: true, status: 200, rule: null });
    expect(order?.message).toMatchObject({ type: "track", event: "Order Completed", userId: "u_42", properties: { revenue: 42 } });
    expect(order?.headers["x-signature"]).toBe(lib.sign(SECRET, order?.rawBody ?? ""));
    expect(receiver.requests).toHaveLength(1);
  });

  it("receives the Analytics client's calls through serve, and waits for several", async () => {
    const analytics = new lib.Analytics("write-key", { endpoint: serveUrl, flushAt: 2 });
    analytics.identify({ userId: "u_7", traits: { plan: "pro" } });
    analytics.track({ userId: "u_7", event: "Signed Up" });
    analytics.track({ userId: "u_7", event: "Signed Up" });
    const arrived = receiver.waitFor({ type: "track", userId: "u_7" }, { count: 2, timeout: "10s" });
    await analytics.close();
    const tracks = await arrived;
    expect(tracks.map((track) => [track.message?.type, track.verdict.valid, track.path])).toEqual([
      ["track", true, "/segment"],
      ["track", true, "/segment"],
    ]);
    await receiver.waitFor({ type: "identify", userId: "u_7" });
  });

  it("a message that never comes fails with what did arrive", async () => {
    await send("--type", "identify", "--user-id", "u_1");
    const forged = JSON.stringify({ type: "track", userId: "u_2", event: "Order Completed", properties: {}, timestamp: "2024-01-01T00:00:00Z" });
    await request(`${receiver.url}/hooks`, { method: "POST", body: forged, headers: { "x-signature": "0".repeat(40) } }).then((r) => r.body.dump());
    const error = await receiver.waitFor({ type: "track", event: "Order Completed" }, { timeout: 300 }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(testing.WaitTimeoutError);
    expect(error).toBeInstanceOf(lib.WebhookCliError);
    // What arrived is on the error too: nothing matched; both requests were received.
    expect(error).toMatchObject({ name: "WaitTimeoutError", code: "E_WAIT_TIMEOUT", timeoutMs: 300, count: 1, matched: [] });
    expect((error as InstanceType<Testing["WaitTimeoutError"]>).received.map((r) => [r.index, r.message?.type, r.valid])).toEqual([
      [1, "identify", true],
      [2, "track", false],
    ]);
    expect((error as Error).message).toBe(
      [
        'waitFor: timed out after 300 ms: 0 of 1 request matching {type: "track", event: "Order Completed"} with a valid verdict.',
        "2 requests arrived: 1 identify (valid), 1 track (invalid)",
        "  #1 POST /hooks  identify  u_1  valid  → 200",
        '  #2 POST /hooks  track  u_2  "Order Completed"  invalid (X-Signature does not match the body)  → 401',
      ].join("\n"),
    );
    // What it waits for, it finds among the invalid when told so.
    const [invalid] = await receiver.waitFor({ type: "track", verdict: "invalid" });
    expect(invalid?.verdict.signatureError).toBe("X-Signature does not match the body");
  });

  it("a predicate sees every request; a misspelt field is refused rather than matching everything", async () => {
    const waiting = receiver.waitFor((r) => r.path.startsWith("/batch") && Array.isArray(r.body));
    await request(`${receiver.url}/batch?x=1`, { method: "PUT", body: "[null]" }).then((r) => r.body.dump());
    const [batch] = await waiting;
    expect(batch).toMatchObject({ method: "PUT", verdict: { bodyKind: "batch" } });
    expect(batch?.body).toEqual([null]);
    await expect(receiver.waitFor({ tpye: "track" } as never)).rejects.toThrow('matcher: unknown key "tpye"');
  });

  it("scripts its answers per test: rules, echo and headers; reset puts them back", async () => {
    receiver.respondWith([
      { match: { type: "track" }, respond: { status: 201, headers: { "X-Test": "one" }, body: { id: 7 } } },
      { match: { path: "/echo" }, respond: { echo: true } },
    ]);
    const sent = await runInProcess(["send", "--type", "track", "--url", `${receiver.url}/hooks`, "--secret", SECRET, "--json"]);
    expect(JSON.parse(sent.stdout.split("\n")[0] as string)).toMatchObject({ urls: [{ status: 201 }] });
    const body = '{"a": 1}';
    const echoed = await request(`${receiver.url}/echo`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", "x-signature": lib.sign(SECRET, body) },
    });
    expect([echoed.statusCode, await echoed.body.text()]).toEqual([200, '{"a": 1}']);
    expect(receiver.requests.map((r) => r.rule)).toEqual([0, 1]);
    receiver.reset();
    expect(receiver.requests).toEqual([]);
    expect((await send("--type", "track", "--json")).stdout).toMatch(/"status":200/);
  });

  it("keeps its history bounded, and waitFor still sees every arrival", async () => {
    const small = await testing.startReceiver({ history: { keep: 2 }, faults: { script: [503, 200] } });
    try {
      const third = small.waitFor({ path: "/3" });
      for (const n of [1, 2, 3, 4]) await request(`${small.url}/${n}`, { method: "POST", body: "{}" }).then((r) => r.body.dump());
      expect((await third).map((r) => r.index)).toEqual([3]);
      expect(small.requests.map((r) => [r.path, r.status])).toEqual([
        ["/3", 200],
        ["/4", 200],
      ]);
      const error = (await small.waitFor({ path: "/1" }, { timeout: 50 }).catch((e: Error) => e)) as Error;
      expect(error.message).toMatch(/^4 requests arrived \(the last 2 kept: 2 payload \(valid\)\)\n {2}… 2 earlier\n {2}#3 POST \/3/m);
      // Closing ends the waits still waiting, each with its own matcher and count.
      const pending = small.waitFor({ path: "/9" }, { count: 2, timeout: "1m" }).catch((e: Error) => e);
      await small.close();
      expect(await pending).toBeInstanceOf(lib.ClosedError);
      expect(((await pending) as Error).message).toMatch(
        /^waitFor: the receiver was closed: 0 of 2 requests matching \{path: "\/9"\} with a valid verdict\.\n/,
      );
    } finally {
      await small.close();
    }
  });
});
