import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServer, statuses, type TestServer } from "../helpers/http-server.js";
import { ROOT } from "../helpers/loaded-modules.js";

// The delivery engine driven as a user of the package drives it: every name comes from
// "webhook-cli" and "webhook-cli/testing", resolved by package name through package.json
// "exports" to the built dist/ (npm run build). The specifier is a variable so the types come from
// src/ (the same declarations the .d.ts files are built from) and a stale dist/ cannot fail the typecheck.
type Face = typeof import("../../src/index.js");
type Testing = typeof import("../../src/testing.js");
const PACKAGE = "webhook-cli";
let lib: Face;
let testing: Testing;
beforeAll(async () => {
  lib = (await import(PACKAGE)) as Face;
  testing = (await import(`${PACKAGE}/testing`)) as Testing;
});

const HOOK = "https://hooks.example.test/segment";
const MESSAGE = JSON.stringify({ version: 1, type: "track", userId: "u_1", event: "Signed Up", timestamp: "2026-01-01T00:00:00.000Z" });
const START = Date.UTC(2026, 0, 1);

describe("the delivery engine from the package, on the fake transport and virtual clock of webhook-cli/testing", () => {
  it("destination actions: each target's method and data mapping, Segment (Actions) as User-Agent; a bad mapping is a ConfigError naming it", async () => {
    const { createDeliveryEngine, ConfigError } = lib;
    const { FakeTransport, VirtualClock } = testing;
    const clock = new VirtualClock(START, { autoAdvance: true });
    const transport = new FakeTransport({ clock });
    const engine = await createDeliveryEngine({
      destination: "actions",
      targets: [HOOK, { url: `${HOOK}/2`, method: "PATCH", data: { user: { "@path": "$.userId" } } }],
      clock,
      transport,
    });
    expect((await engine.deliver(MESSAGE)).delivered).toBe(true);
    expect(transport.requests.map((r) => [r.url, r.body, r.headers["User-Agent"]])).toEqual([
      [HOOK, MESSAGE, "Segment (Actions)"],
      [`${HOOK}/2`, '{"user":"u_1"}', "Segment (Actions)"],
    ]);
    await expect(createDeliveryEngine({ destination: "actions", targets: [{ url: HOOK, data: { a: { "@if": {} } } }], transport })).rejects.toThrow(
      ConfigError,
    );
    await expect(createDeliveryEngine({ targets: [{ url: HOOK, method: "PUT" }], transport })).rejects.toThrow(/apply to destination "actions"/);
  });

  it("retries 503s on the planner's jittered schedule until a 2xx, signing every attempt", async () => {
    const { createDeliveryEngine, verify, planNextRound, RETRY_RULES } = lib;
    const { FakeTransport, VirtualClock, answers, seededRandom } = testing;
    const clock = new VirtualClock(START, { autoAdvance: true });
    const transport = new FakeTransport({ clock, respond: answers(503, 503, 200) });
    const engine = await createDeliveryEngine({ targets: [HOOK], secret: "s3cret", clock, random: seededRandom(7), transport });

    const attempts: [number, number | null, number | undefined][] = [];
    const result = await engine.deliver(MESSAGE, { onAttempt: (event) => attempts.push([event.attempt, event.status, event.retryInMs]) });

    // The waits are the public planner's, on the classic row, with the same seeded jitter.
    const jitter = seededRandom(7);
    const waitAfter = (round: number, now: number): number => {
      const windowMs = RETRY_RULES.classic.limit.windowMs;
      const plan = planNextRound({ round, outcomes: [{ kind: "status", status: 503 }], now, firstAttemptAt: START, windowMs, random: jitter });
      if (!plan.retry) throw new Error(`round ${round}: no retry planned (${plan.reason})`);
      return plan.waitMs;
    };
    const first = waitAfter(1, START);
    const second = waitAfter(2, START + first);
    expect(first).toBeGreaterThan(0);
    expect(transport.requests.map((request) => [request.attempt, request.at - START])).toEqual([
      [1, 0],
      [2, first],
      [3, first + second],
    ]);
    expect(attempts).toEqual([
      [1, 503, first],
      [2, 503, second],
      [3, 200, undefined],
    ]);
    expect(result).toEqual({ delivered: true, rounds: 3, interrupted: false, urls: [{ url: HOOK, status: 200, attempts: 3, error: null, ms: 0 }] });
    for (const request of transport.requests) {
      expect(request.body).toBe(MESSAGE);
      expect(request.headers["User-Agent"]).toBe("Segment.io/1.0");
      expect(verify("s3cret", request.body, request.headers["X-Signature"])).toBe(true);
    }
    await engine.close();
    expect(transport.closed).toBe(true);
  });

  it("honours Retry-After, stops at a permanent 4xx, and gives up when the retry window closes", async () => {
    const { createDeliveryEngine, planNextRound } = lib;
    const { FakeTransport, VirtualClock, answers } = testing;
    const clock = new VirtualClock(START, { autoAdvance: true });
    const run = async (respond: ReturnType<typeof answers>, retryWindowMs?: number) => {
      const transport = new FakeTransport({ clock, respond });
      const engine = await createDeliveryEngine({
        targets: [HOOK],
        clock,
        random: () => 1,
        transport,
        ...(retryWindowMs !== undefined ? { retryWindowMs } : {}),
      });
      const at = clock.now();
      const result = await engine.deliver(MESSAGE);
      return { result, gaps: transport.requests.map((request) => request.at - at), signed: transport.requests.some((r) => "X-Signature" in r.headers) };
    };

    const limited = await run(answers({ status: 429, retryAfterMs: 30_000 }, 204));
    expect(limited.gaps).toEqual([0, 30_000]);
    expect(limited.result.delivered).toBe(true);
    // No secret: nothing is signed.
    expect(limited.signed).toBe(false);

    const refused = await run(answers(400));
    const afterRefusal = { round: 1, outcomes: [{ kind: "status", status: 400 }] as const, now: START, firstAttemptAt: START, windowMs: 60_000 };
    expect(planNextRound({ ...afterRefusal, random: () => 1 })).toEqual({ retry: false, reason: "permanent" });
    expect(refused.gaps).toEqual([0]);
    expect(refused.result).toMatchObject({ delivered: false, rounds: 1, urls: [{ status: 400, attempts: 1, error: "HTTP 400" }] });

    // random 1: waits of 1 s, 2 s, 4 s; the fourth attempt would start after 5 s.
    const closed = await run(answers(503), 5_000);
    expect(closed.gaps).toEqual([0, 1_000, 3_000]);
    expect(closed.result.urls[0]?.error).toBe("HTTP 503; retry window closed");
  });

  it("refuses bad options before anything is sent, naming the option", async () => {
    const { createDeliveryEngine, ConfigError } = lib;
    const { FakeTransport } = testing;
    const transport = new FakeTransport();
    const refusal = (options: Record<string, unknown>) =>
      createDeliveryEngine({ transport, ...options } as never).then(
        () => undefined,
        (error: unknown) => error,
      );

    const badUrl = await refusal({ targets: ["ftp://files.example.test/"] });
    expect(badUrl).toBeInstanceOf(ConfigError);
    expect(badUrl).toMatchObject({ code: "E_CONFIG", message: 'targets[0]: "ftp://files.example.test/" is not an http: or https: URL' });
    expect(await refusal({ targets: [{ url: HOOK, headers: { "X-Signature": "forged" } }] })).toMatchObject({
      message: 'targets[0].headers: header "X-Signature" cannot be set: webhook-cli sets it itself',
    });
    expect(await refusal({ targets: [HOOK], secret: "" })).toMatchObject({ message: "secret must be a non-empty string (leave it out to send unsigned)" });
    expect(await refusal({ targets: [HOOK], retryWindow: 1000 })).toMatchObject({
      message: expect.stringMatching(/^Unknown option 'retryWindow'; known options: targets, /),
    });
    expect(await refusal({ targets: [HOOK], ca: ["-----BEGIN CERTIFICATE-----"] })).toMatchObject({
      message: expect.stringMatching(/^ca and connections set up the default transport/),
    });
    expect(await refusal({ targets: [HOOK], timeoutMs: 0 })).toMatchObject({ source: { key: "timeoutMs" } });
    expect(transport.requests).toEqual([]);
  });
});

describe("the delivery engine from the package, over its default (undici) transport", () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("POSTs the exact bytes, signed, with the target's static headers, to a real loopback server", async () => {
    const { createDeliveryEngine, sign } = lib;
    server = await startServer(statuses(500, 200));
    const engine = await createDeliveryEngine({
      targets: [{ url: `${server.url}/hook`, headers: { "X-Env": "ci" } }],
      secret: "s3cret",
      userAgent: "my-app/2.0",
      timeoutMs: 2_000,
      random: () => 0,
    });
    try {
      const result = await engine.deliver(MESSAGE);
      expect(result).toMatchObject({ delivered: true, rounds: 2, urls: [{ status: 200, attempts: 2, error: null }] });
    } finally {
      await engine.close();
    }
    expect(server.requests).toHaveLength(2);
    const [request] = server.requests;
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/hook");
    expect(request?.body.toString("utf8")).toBe(MESSAGE);
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": "my-app/2.0",
      "x-env": "ci",
      "x-signature": sign("s3cret", MESSAGE),
    });
  });
});

describe("docs/library.md", () => {
  // Each `js runnable` block runs as a script in the repository (so "webhook-cli" resolves to the
  // package itself) and prints what its `console.log(…); // …` comments say.
  const blocks = [...readFileSync(join(ROOT, "docs/library.md"), "utf8").matchAll(/^```js runnable\n([\s\S]*?)^```/gm)].map((match) => match[1] as string);

  it("has runnable examples", () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  it.each(blocks.map((code, i) => [i + 1, code]))("example %i prints what its comments say", async (_n, code) => {
    const expected = code.split("\n").flatMap((line) => /console\.log\(.*\);\s*\/\/\s*(.*)$/.exec(line)?.[1] ?? []);
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, timeout: 10_000 });
    expect(stdout.trimEnd().split("\n")).toEqual(expected);
  });
});
