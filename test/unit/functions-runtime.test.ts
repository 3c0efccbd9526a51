import { afterEach, describe, expect, it } from "vitest";
import { FunctionModule, type FunctionOptions } from "../../src/functions/runtime.js";
import { VirtualClock } from "../../src/util/clock.js";

// Destination functions written here, run as the service runs them (docs/functions.md): each
// handler, the error classes, the 5 s limit in virtual time, console capture, state kept
// between invocations, onBatch.
const opened: FunctionModule[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fn) => fn.close()));
});

function load(code: string, options: FunctionOptions = {}): FunctionModule {
  const fn = new FunctionModule(code, "dest.js", { clock: new VirtualClock(0, { autoAdvance: true }), ...options });
  opened.push(fn);
  return fn;
}

const TYPES = ["identify", "track", "page", "screen", "group", "alias", "delete"];

describe("destination handlers", () => {
  it("each event type reaches its handler with the event and the settings; the return is delivered", async () => {
    const handlers = ["onIdentify", "onTrack", "onPage", "onScreen", "onGroup", "onAlias", "onDelete"];
    const fn = load(handlers.map((name) => `async function ${name}(event, settings) { return ["${name}", event.type, settings.apiKey] }`).join("\n"));
    for (const [i, type] of TYPES.entries()) {
      const record = await fn.runEvent({ type }, { apiKey: "k1" });
      expect(record).toMatchObject({ handler: handlers[i], outcome: { kind: "delivered" }, returned: [handlers[i], type, "k1"] });
    }
  });

  it("a missing handler and an unknown type are skipped, named, and call nothing", async () => {
    const fn = load("async function onTrack() { console.log('called') }");
    expect(await fn.runEvent({ type: "alias" }, {})).toMatchObject({
      handler: null,
      outcome: { kind: "skipped", errorType: "Unsupported Event Type", reason: "no onAlias handler" },
      logs: [],
    });
    expect((await fn.runEvent({ type: "trak" }, {})).outcome).toMatchObject({ kind: "skipped", reason: 'no handler for events of type "trak"' });
    expect((await fn.runEvent(null, {})).outcome).toMatchObject({ kind: "skipped", reason: "no handler for events of type null" });
  });

  it("each error class ends the invocation as the service's table says, named with where it was thrown", async () => {
    const fn = load(
      [
        "async function onTrack(event) {",
        "  if (event.event === 'skip') throw new EventNotSupported('not this one')",
        "  if (event.event === 'bad') throw new InvalidEventPayload('email is required')",
        "  if (event.event === 'settings') throw new ValidationError('apiKey is required')",
        "  if (event.event === 'later') throw new RetryError('rate limited')",
        "  if (event.event === 'bug') return event.properties.total.toFixed()",
        "  class Gone extends RetryError {}",
        "  throw new Gone('subclass')",
        "}",
      ].join("\n"),
    );
    const outcome = async (event: string) => (await fn.runEvent({ type: "track", event }, {})).outcome;
    expect(await outcome("skip")).toEqual({ kind: "skipped", errorType: "Unsupported Event Type", reason: "EventNotSupported: not this one" });
    expect(await outcome("bad")).toEqual({ kind: "failed", errorType: "Message Rejected", reason: "InvalidEventPayload: email is required" });
    expect(await outcome("settings")).toEqual({ kind: "failed", errorType: "Message Rejected", reason: "ValidationError: apiKey is required" });
    expect(await outcome("later")).toEqual({ kind: "retry", errorType: "Retry", reason: "RetryError: rate limited" });
    expect(await outcome("other")).toEqual({ kind: "retry", errorType: "Retry", reason: "Gone: subclass" });
    const bug = await fn.runEvent({ type: "track", event: "bug" }, {});
    expect(bug.outcome).toMatchObject({ kind: "failed", errorType: "Bad Request" });
    expect(bug.thrown).toEqual({
      name: "TypeError",
      message: "Cannot read properties of undefined (reading 'total')",
      isError: true,
      location: "dest.js:6:54",
    });
  });

  it("the classes are the function's own: instanceof Error holds inside, and the name is the class's", async () => {
    const fn = load("async function onTrack() { const e = new RetryError('x'); return [e instanceof Error, e.name, String(e)] }");
    expect((await fn.runEvent({ type: "track" }, {})).returned).toEqual([true, "RetryError", "RetryError: x"]);
  });

  it("a thrown non-Error is reported clearly, never as an empty message", async () => {
    const fn = load("async function onTrack(e) { if (e.event === 's') throw 'boom'; if (e.event === 'o') throw { code: 42 }; throw undefined }");
    expect((await fn.runEvent({ type: "track", event: "s" }, {})).outcome).toEqual({
      kind: "failed",
      errorType: "Bad Request",
      reason: 'threw a string, not an Error: "boom"',
    });
    expect((await fn.runEvent({ type: "track", event: "o" }, {})).thrown).toEqual({ name: "object", message: "{ code: 42 }", isError: false });
    expect((await fn.runEvent({ type: "track", event: "u" }, {})).outcome).toMatchObject({ reason: "threw a undefined, not an Error: undefined" });
  });

  it("a synchronous handler works too, and its throw is caught the same way", async () => {
    const fn = load("function onTrack(e) { if (e.event) throw new ValidationError('no'); return 7 }");
    expect((await fn.runEvent({ type: "track" }, {})).returned).toBe(7);
    expect((await fn.runEvent({ type: "track", event: "x" }, {})).outcome.kind).toBe("failed");
  });
});

describe("the 5 s limit (virtual time)", () => {
  it("a handler that never settles is cut at exactly 5 s and retried, as a timeout is", async () => {
    const clock = new VirtualClock(0);
    const fn = load("async function onTrack() { console.log('waiting'); await new Promise(() => {}) }", { clock });
    let settled = false;
    const running = fn.runEvent({ type: "track" }, {}).finally(() => (settled = true));
    await clock.advance(4999);
    expect(settled).toBe(false);
    await clock.advance(1);
    const record = await running;
    expect(record.outcome).toEqual({ kind: "retry", errorType: "Timeout", reason: "did not finish within 5 s (the service's limit)" });
    expect(record.thrown).toEqual({ name: "Timeout", message: "did not finish within 5 s", isError: true });
    expect(record.logs).toEqual([{ level: "log", text: "waiting" }]);
  });

  it("a timer can be cleared by what setTimeout returned, or by its number", async () => {
    const clock = new VirtualClock(0);
    const fn = load(
      "let fired = 0\nasync function onTrack() { const a = setTimeout(() => fired++, 10); clearTimeout(a); const b = setTimeout(() => fired++, 10); clearTimeout(Number(b)); setTimeout(() => fired++, 10); return fired }",
      { clock },
    );
    await fn.runEvent({ type: "track" }, {});
    await clock.advance(10);
    expect((await fn.runEvent({ type: "track" }, {})).returned).toBe(1);
  });

  it("the function's own timers run on the same clock: a 4 s wait delivers, a 6 s wait times out", async () => {
    const clock = new VirtualClock(0, { autoAdvance: true });
    const fn = load("async function onTrack(e) { await new Promise((r) => setTimeout(r, e.properties.ms)); return Date.now() }", { clock });
    expect((await fn.runEvent({ type: "track", properties: { ms: 4000 } }, {})).outcome.kind).toBe("delivered");
    expect(clock.now()).toBe(4000);
    expect((await fn.runEvent({ type: "track", properties: { ms: 6000 } }, {})).outcome.kind).toBe("retry");
    expect(clock.now()).toBe(9000);
  });

  it("what a timed-out handler logs afterwards is not its record", async () => {
    const clock = new VirtualClock(0);
    const fn = load("async function onTrack() { await new Promise((r) => setTimeout(r, 7000)); console.log('late') }", { clock });
    const running = fn.runEvent({ type: "track" }, {});
    await clock.advance(5000);
    const record = await running;
    await clock.advance(2000);
    expect(record.logs).toEqual([]);
  });
});

describe("console", () => {
  it("is captured per invocation, formatted as Node formats it, even for invocations running at once", async () => {
    const clock = new VirtualClock(0);
    const fn = load(
      "async function onTrack(e) { console.log('start %s', e.userId, { n: 1 }); await new Promise((r) => setTimeout(r, e.properties.ms)); console.error('end', e.userId) }",
      { clock },
    );
    const a = fn.runEvent({ type: "track", userId: "a", properties: { ms: 20 } }, {});
    const b = fn.runEvent({ type: "track", userId: "b", properties: { ms: 10 } }, {});
    await clock.advance(20);
    expect((await a).logs).toEqual([
      { level: "log", text: "start a { n: 1 }" },
      { level: "error", text: "end a" },
    ]);
    expect((await b).logs).toEqual([
      { level: "log", text: "start b { n: 1 }" },
      { level: "error", text: "end b" },
    ]);
  });

  it("keeps at most 64 KiB of text per invocation and counts the rest", async () => {
    const fn = load("async function onTrack() { for (let i = 0; i < 100; i++) console.log('x'.repeat(1024)) }");
    const record = await fn.runEvent({ type: "track" }, {});
    expect(record.logs).toHaveLength(64);
    expect(record.logsDropped).toBe(36);
  });

  it("what the top-level code logs is kept with the load", () => {
    const fn = load("console.log('loaded', 1)\nasync function onTrack() {}");
    expect(fn.atLoad.logs).toEqual([{ level: "log", text: "loaded 1" }]);
  });
});

describe("state between invocations", () => {
  it("top-level variables live on, as in a warm instance; settings are a fresh copy each time", async () => {
    const fn = load(
      "let seen = []\nconst url = new URL('https://api.example.com/x')\nasync function onTrack(e, s) { seen.push(e.userId); url.searchParams.set('n', seen.length); s.apiKey = 'changed'; return [seen.join(), url.href] }",
    );
    const settings = { apiKey: "k" };
    await fn.runEvent({ type: "track", userId: "u1" }, settings);
    expect((await fn.runEvent({ type: "track", userId: "u2" }, settings)).returned).toEqual(["u1,u2", "https://api.example.com/x?n=2"]);
    expect(settings.apiKey).toBe("k");
  });

  it("top-level code may build what the handlers share: Headers and btoa at load, helpers as const arrow functions", async () => {
    const fn = load(
      "const auth = new Headers({ Authorization: 'Basic ' + btoa('token:') })\nconst nameOf = async (event) => event.event.toUpperCase()\nasync function onTrack(event) { return [auth.get('authorization'), await nameOf(event)] }",
    );
    expect((await fn.runEvent({ type: "track", event: "Signed Up" }, {})).returned).toEqual(["Basic dG9rZW46", "SIGNED UP"]);
  });

  it("timers the function leaves running stop when it is closed; a throw in one is logged, not fatal", async () => {
    const clock = new VirtualClock(0);
    const fn = load(
      "let ticks = 0\nsetInterval(() => { ticks++; if (ticks === 2) throw new Error('tick') }, 100).unref()\nasync function onTrack() { return ticks }",
      {
        clock,
      },
    );
    await clock.advance(350);
    expect((await fn.runEvent({ type: "track" }, {})).returned).toBe(3);
    expect(fn.atLoad.logs.map((entry) => entry.text)).toEqual([expect.stringMatching(/^Uncaught error in a timer callback: Error: tick/)]);
    await fn.close();
    expect(clock.pending).toBe(0);
  });
});

describe("promises the function rejects and never handles", () => {
  it("fail the invocation they were made in, as they end the service's instance, instead of the process", async () => {
    const clock = new VirtualClock(0);
    const fn = load(
      "async function onTrack() { Promise.reject(new InvalidEventPayload('unawaited')); await new Promise((r) => setTimeout(r, 100)); return 'finished' }",
      { clock },
    );
    const running = fn.runEvent({ type: "track" }, {});
    await clock.advance(100);
    const record = await running;
    expect(record.outcome).toEqual({ kind: "failed", errorType: "Message Rejected", reason: "InvalidEventPayload: unawaited" });
    expect(record.logs).toEqual([{ level: "error", text: "Unhandled promise rejection: the invocation fails with it" }]);
  });

  it("after the invocation ended (or at load) they are kept as late, with where they were made", async () => {
    const fn = load("Promise.reject(new Error('at load'))\nasync function onTrack() { Promise.reject(new Error('after')); return 1 }");
    expect((await fn.runEvent({ type: "track" }, {})).outcome.kind).toBe("delivered");
    await expect.poll(() => fn.late.map((thrown) => `${thrown.message} ${thrown.location}`)).toEqual(["at load dest.js:1:16", "after dest.js:2:43"]);
  });
});

describe("onBatch", () => {
  it("gets the events and the settings, and its per-event answers become per-event outcomes", async () => {
    const fn = load(
      "async function onTrack() {}\nasync function onBatch(events, settings) { return events.map((e) => ({ status: e.userId === 'bad' ? 400 : e.userId === 'later' ? 503 : 200, errormessage: settings.why })) }",
    );
    const record = await fn.runBatch(
      [
        { type: "track", userId: "ok" },
        { type: "identify", userId: "bad" },
        { type: "track", userId: "later" },
      ],
      { why: "because" },
    );
    expect(record.handler).toBe("onBatch");
    expect(record.events).toEqual([
      { kind: "delivered" },
      { kind: "failed", errorType: "Bad Request", reason: "status 400: because" },
      { kind: "retry", errorType: "Retry", reason: "status 503: because" },
    ]);
  });

  it("a RetryError retries the whole batch; more than 400 events is refused", async () => {
    const fn = load("async function onBatch() { throw new RetryError('later') }");
    expect((await fn.runBatch([{ type: "track" }, { type: "page" }], {})).events.map((o) => o.kind)).toEqual(["retry", "retry"]);
    await expect(
      fn.runBatch(
        Array.from({ length: 401 }, () => ({ type: "track" })),
        {},
      ),
    ).rejects.toThrow("a batch holds 1 to 400 events, not 401");
  });
});
