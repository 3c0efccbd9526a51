import { afterEach, describe, expect, it } from "vitest";
import type { Target } from "../../src/config/destination.js";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import { FunctionTransport } from "../../src/delivery/function-transport.js";
import type { AttemptEvent, DeliveryResult } from "../../src/delivery/types.js";
import { dispatch, type DispatchEntry } from "../../src/dispatch/dispatcher.js";
import { batchingFor } from "../../src/dispatch/units.js";
import { FunctionModule } from "../../src/functions/runtime.js";
import { VirtualClock } from "../../src/util/clock.js";

// A destination function as a transport of THE delivery engine (docs/functions.md#as-a-destination),
// in virtual time: each error class mapped as the service maps it, RetryError and the 5 s limit
// retried on the destination's schedule (docs/delivery.md#retry-schedule), onBatch's per-event
// answers retrying only the events that failed.
const URL = "function:dest.js";
const TARGET: Target = { url: URL, headers: {}, function: { file: "dest.js", base: "/x", settings: {} } };
const engines: DeliveryEngine[] = [];
const functions: FunctionModule[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()));
  // The transport leaves its functions to whoever loaded them: here, the test.
  await Promise.all(functions.splice(0).map((fn) => fn.close()));
});

function engineFor(code: string, options: { timeoutMs?: number; retryWindowMs?: number; onSetupProblem?: (problem: string) => void } = {}) {
  const clock = new VirtualClock(0, { autoAdvance: true });
  const fn = new FunctionModule(code, "dest.js", { clock });
  functions.push(fn);
  const transport = new FunctionTransport(new Map([[URL, { fn, settings: { apiKey: "k" } }]]), {
    ...(options.onSetupProblem ? { onSetupProblem: options.onSetupProblem } : {}),
  });
  const engine = new DeliveryEngine(
    { targets: [TARGET], secret: "s3cret", userAgent: "test" },
    {
      transport,
      clock,
      random: () => 1,
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.retryWindowMs !== undefined ? { retryWindowMs: options.retryWindowMs } : {}),
    },
  );
  engines.push(engine);
  return { engine, clock };
}

const track = (fields: Record<string, unknown> = {}) => JSON.stringify({ type: "track", userId: "u1", event: "E", ...fields });

describe("the function transport under the engine", () => {
  it("a return is delivered in one attempt, with the invocation on the result; nothing is signed for a function", async () => {
    const { engine } = engineFor("async function onTrack(event, settings) { console.log('hi'); return { ok: event.userId, key: settings.apiKey } }");
    const events: AttemptEvent[] = [];
    const result = await engine.deliver(track(), { onAttempt: (event) => events.push(event), captureResponse: true });
    expect(result).toMatchObject({ delivered: true, rounds: 1, interrupted: false, urls: [{ url: URL, status: 200, attempts: 1, error: null }] });
    expect(result.skipped).toBeUndefined();
    expect(result.urls[0]?.invocation).toMatchObject({ handler: "onTrack", returned: { ok: "u1", key: "k" }, logs: [{ level: "log", text: "hi" }] });
    expect(result.urls[0]?.response).toEqual({ contentType: "application/json", body: { body: '{"ok":"u1","key":"k"}' } });
    expect(events[0]?.request.headers["X-Signature"]).toBeUndefined();
  });

  it("RetryError is retried on the destination's schedule until it returns", async () => {
    const { engine, clock } = engineFor("let n = 0; async function onTrack() { n += 1; if (n < 3) throw new RetryError(`busy ${n}`); return n }");
    const events: AttemptEvent[] = [];
    const result = await engine.deliver(track(), { onAttempt: (event) => events.push(event) });
    expect(result).toMatchObject({ delivered: true, rounds: 3, urls: [{ status: 200, attempts: 3, error: null }] });
    // random() = 1: the full wait before retry n, 2^(n-1) s.
    expect(events.map((event) => [event.status, event.error, event.retryInMs])).toEqual([
      [500, "Retry: RetryError: busy 1", 1000],
      [500, "Retry: RetryError: busy 2", 2000],
      [200, null, undefined],
    ]);
    expect(clock.now()).toBe(3000);
  });

  it("the 5 s limit is a timeout, retried, and the engine's shorter per-attempt timeout does not cut a function", async () => {
    const { engine, clock } = engineFor("let n = 0; async function onTrack() { n += 1; if (n === 1) await new Promise(() => {}); return n }", {
      timeoutMs: 1000,
    });
    const events: AttemptEvent[] = [];
    const result = await engine.deliver(track(), { onAttempt: (event) => events.push(event) });
    expect(result).toMatchObject({ delivered: true, rounds: 2 });
    expect(events[0]).toMatchObject({
      outcome: { kind: "timeout" },
      status: null,
      error: "Timeout: did not finish within 5 s (the service's limit)",
      retryInMs: 1000,
    });
    expect(clock.now()).toBe(6000);
  });

  it("InvalidEventPayload, ValidationError and any other throw fail at once, never retried, as a 4xx", async () => {
    const { engine } = engineFor(
      [
        "async function onTrack(event) {",
        "  if (event.event === 'bad') throw new InvalidEventPayload('email is required')",
        "  if (event.event === 'settings') throw new ValidationError('apiKey is required')",
        "  if (event.event === 'string') throw 'oops'",
        "  return event.properties.total.toFixed()",
        "}",
      ].join("\n"),
    );
    const error = async (event: string) => {
      const result = await engine.deliver(track({ event }));
      expect(result).toMatchObject({ delivered: false, rounds: 1, urls: [{ status: 400, attempts: 1 }] });
      expect(result.skipped).toBeUndefined();
      return result.urls[0]?.error;
    };
    expect(await error("bad")).toBe("Message Rejected: InvalidEventPayload: email is required");
    expect(await error("settings")).toBe("Message Rejected: ValidationError: apiKey is required");
    expect(await error("string")).toBe('Bad Request: threw a string, not an Error: "oops"');
    expect(await error("bug")).toMatch(/^Bad Request: TypeError: Cannot read properties of undefined/);
  });

  it("no handler and EventNotSupported skip the event: one attempt, no failure, the reason kept", async () => {
    const { engine } = engineFor("async function onTrack() { throw new EventNotSupported('not this one') }");
    const skipped = await engine.deliver(track());
    expect(skipped).toMatchObject({
      delivered: false,
      skipped: true,
      rounds: 1,
      urls: [{ status: null, error: null, attempts: 1, skipped: "EventNotSupported: not this one" }],
    });
    const none = await engine.deliver(JSON.stringify({ type: "page", userId: "u1" }));
    expect(none).toMatchObject({ delivered: false, skipped: true, urls: [{ skipped: "no onPage handler" }] });
  });

  it("RetryError every time: retried until the 4 h window closes, then failed", async () => {
    const { engine, clock } = engineFor("async function onTrack() { throw new RetryError('down') }");
    const result = await engine.deliver(track());
    expect(result.delivered).toBe(false);
    expect(result.skipped).toBeUndefined();
    expect(result.urls[0]?.error).toBe("Retry: RetryError: down; retry window closed");
    // Waits of 1, 2, … 256 s (10 attempts by 511 s), then of 5 min: 46 more fit before 4 h.
    expect(result.urls[0]?.attempts).toBe(56);
    expect(clock.now()).toBeLessThanOrEqual(4 * 3600_000);
  });

  it("a package the function uses that is not installed is a setup problem, told once per attempt, not a failure of the event", async () => {
    const problems: string[] = [];
    const { engine } = engineFor("async function onTrack() { return _.isString('x') }", {
      retryWindowMs: 0,
      onSetupProblem: (problem) => problems.push(problem),
    });
    const result = await engine.deliver(track());
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/`_` is lodash 4\.17\.19 in the service's runtime, and it is not installed here/);
    expect(result.urls[0]?.error).toMatch(/^setup: /);
  });
});

describe("onBatch through the engine's batches", () => {
  const BATCH = [
    "let calls = [];",
    "async function onTrack() { return 'single' }",
    "async function onBatch(events) {",
    "  calls.push(events.map((e) => e.event));",
    "  return events.map((e) => e.event === 'ok' ? { status: 200 } : e.event === 'bad' ? { status: 400, errormessage: 'bad one' } : e.event === 'skip' ? { status: 200 } : calls.length < 3 ? { status: 500, errormessage: 'later' } : { status: 200 })",
    "}",
    "async function onIdentify() { return calls }",
  ].join("\n");

  it("per-event answers: only the events answered 5xx go again, together, on the schedule; each event has its own result", async () => {
    const { engine, clock } = engineFor(BATCH);
    const events: AttemptEvent[] = [];
    const bodies = ["ok", "bad", "later", "later"].map((event) => track({ event }));
    const results = await engine.deliverBatch(TARGET, bodies, { onAttempt: (event) => events.push(event) });
    expect(results.map((r) => [r.delivered, r.rounds, r.urls[0]?.attempts, r.urls[0]?.status, r.urls[0]?.error])).toEqual([
      [true, 1, 1, 200, null],
      [false, 1, 1, 400, "Bad Request: status 400: bad one"],
      [true, 3, 3, 200, null],
      [true, 3, 3, 200, null],
    ]);
    expect(events.map((event) => [event.request.items, event.error, event.retryInMs])).toEqual([
      [4, "3 of 4 events: Bad Request: status 400: bad one", 1000],
      [2, "2 of 2 events: Retry: status 500: later", 2000],
      [2, null, undefined],
    ]);
    expect(JSON.parse(events[1]?.request.body.toString() ?? "").map((e: { event: string }) => e.event)).toEqual(["later", "later"]);
    expect(clock.now()).toBe(3000);
    const calls = await engine.deliver(JSON.stringify({ type: "identify", userId: "u" }), { captureResponse: true });
    expect(calls.urls[0]?.response?.body).toEqual({
      body: JSON.stringify([
        ["ok", "bad", "later", "later"],
        ["later", "later"],
        ["later", "later"],
      ]),
    });
  });

  it("a batch that throws RetryError is retried whole; one that throws anything else fails every event", async () => {
    const { engine } = engineFor(
      "let n = 0; async function onBatch(events) { n += 1; if (events[0].event === 'x') throw new TypeError('bug'); if (n < 2) throw new RetryError('wait'); }",
    );
    const retried = await engine.deliverBatch(TARGET, [track({ event: "a" }), track({ event: "b" })]);
    expect(retried.map((r) => [r.delivered, r.rounds])).toEqual([
      [true, 2],
      [true, 2],
    ]);
    const failed = await engine.deliverBatch(TARGET, [track({ event: "x" }), track({ event: "y" })]);
    expect(failed.map((r) => [r.delivered, r.rounds, r.urls[0]?.error])).toEqual([
      [false, 1, "Bad Request: TypeError: bug"],
      [false, 1, "Bad Request: TypeError: bug"],
    ]);
  });

  it("a stop while a batch waits to retry leaves its pending events interrupted, the settled ones as they were", async () => {
    const { engine } = engineFor("async function onBatch(events) { return events.map((e) => ({ status: e.event === 'ok' ? 200 : 503 })) }");
    const stop = new AbortController();
    const results = await engine.deliverBatch(TARGET, [track({ event: "ok" }), track({ event: "no" })], {
      signal: stop.signal,
      onAttempt: () => stop.abort(),
    });
    expect(results.map((r) => [r.delivered, r.interrupted])).toEqual([
      [true, false],
      [false, true],
    ]);
  });
});

describe("a function's batches through the dispatcher's batcher", () => {
  interface Entry extends DispatchEntry {
    body: string;
  }
  const entries = (events: string[]): Entry[] =>
    events.map((event, i) => ({ line: i + 1, orderKey: `u${i % 2}`, body: track({ event, userId: `u${i % 2}` }), time: undefined }));

  it("events go to onBatch in batches of the target's size; each message gets its event's outcome; skipped ones count apart", async () => {
    const { engine, clock } = engineFor(
      [
        "const tries = {};",
        "async function onBatch(events) {",
        "  for (const e of events) tries[e.event] = (tries[e.event] || 0) + 1;",
        "  return events.map((e) => e.event === 'bad' ? { status: 400, errormessage: 'no' } : e.event === 'retry' && tries.retry < 2 ? { status: 503 } : { status: 200 });",
        "}",
      ].join("\n"),
    );
    const target = { ...TARGET, batchSize: 3 };
    const results = new Map<number, DeliveryResult>();
    const summary = await dispatch<Entry>({
      source: entries(["a", "bad", "retry", "b", "c", "d", "e"]),
      engine,
      concurrency: 4,
      clock,
      batching: batchingFor({ targets: [target] }),
      hooks: { onResult: (entry, result) => results.set(entry.line, result) },
    });
    expect(summary).toMatchObject({ sent: 7, delivered: 6, failed: 1, skipped: 0, retried: 1, stopped: false });
    expect([...results.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(results.get(2)?.urls[0]?.error).toBe("Bad Request: status 400: no");
    expect(results.get(3)).toMatchObject({ delivered: true, rounds: 2, urls: [{ attempts: 2 }] });
    expect(results.get(1)).toMatchObject({ delivered: true, rounds: 1, urls: [{ attempts: 1 }] });
  });

  it("without a batch size, each event goes to its handler; a skipped message counts as skipped and is done for the resume line", async () => {
    const { engine, clock } = engineFor("async function onTrack(e) { if (e.event === 'skip') throw new EventNotSupported('no'); return 1 }");
    const stop = new AbortController();
    const list = [...entries(["a", "skip", "b"]), { line: 4, orderKey: undefined, body: JSON.stringify({ type: "page", userId: "x" }), time: undefined }];
    const summary = await dispatch<Entry>({ source: list, engine, concurrency: 1, clock, signal: stop.signal });
    expect(summary).toMatchObject({ sent: 4, delivered: 2, skipped: 2, failed: 0, stopped: false });
    expect(batchingFor({ targets: [TARGET] })).toBeUndefined();
  });
});
