import { afterEach, describe, expect, it } from "vitest";
import { sign, verify } from "../../src/signing/x-signature.js";
import { FunctionModule, type FunctionOptions } from "../../src/functions/runtime.js";
import { VirtualClock } from "../../src/util/clock.js";
import { closeServersAfterEach } from "../helpers/setup.js";

// A function's fetch against real servers on 127.0.0.1 (docs/functions.md#egress):
// recorded with its invocation, sent to an egress URL when asked, cut when the invocation ends.
const { server } = closeServersAfterEach();
const opened: FunctionModule[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fn) => fn.close()));
});

function load(code: string, options: FunctionOptions = {}): FunctionModule {
  const fn = new FunctionModule(code, "fetching.js", options);
  opened.push(fn);
  return fn;
}

const json = (status: number, body: unknown) => (_req: unknown, res: import("node:http").ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

describe("a function's fetch", () => {
  it("sends as the function asks (a string or a URL, lower-case method, headers as an object or Headers) and is recorded", async () => {
    const api = await server(json(200, { ok: true }));
    const fn = load(`async function onTrack(event, settings) {
      const res = await fetch(settings.base + '/v1/track?api_key=' + settings.apiKey, {
        method: 'post', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: event.event }) })
      const second = await fetch(new URL('/v1/check', settings.base), { headers: new Headers({ Authorization: 'Basic ' + btoa(settings.apiKey + ':') }) })
      return [res.status, await res.json(), second.status, await second.text()]
    }`);
    const record = await fn.runEvent({ type: "track", event: "Signed Up" }, { base: api.url, apiKey: "k1" });
    expect(record.returned).toEqual([200, { ok: true }, 200, '{"ok":true}']);
    expect(api.requests.map((r) => [r.method, r.url, r.headers["content-type"] ?? null, r.headers["authorization"] ?? null, r.body.toString()])).toEqual([
      ["POST", "/v1/track?api_key=k1", "application/json", null, '{"name":"Signed Up"}'],
      ["GET", "/v1/check", null, `Basic ${Buffer.from("k1:").toString("base64")}`, ""],
    ]);
    expect(record.fetches).toEqual([
      { method: "POST", url: `${api.url}/v1/track?api_key=k1`, status: 200, ms: expect.any(Number) },
      { method: "GET", url: `${api.url}/v1/check`, status: 200, ms: expect.any(Number) },
    ]);
  });

  it("with an egress URL every request goes there instead, same method, headers and body, the URL asked for in a header", async () => {
    const egress = await server(json(201, { captured: true }));
    const fn = load(
      `async function onTrack(event) {
        const res = await fetch('https://hooks.slack.com/services/T0/B0/XYZ', { method: 'POST', headers: { 'X-Team': 'a' }, body: JSON.stringify({ text: event.event }) })
        const req = await fetch(new Request('https://api.example.com/users/2', { method: 'PUT', body: 'x' }))
        return [res.status, await res.json(), req.status]
      }`,
      { egress: { url: new URL(`${egress.url}/capture?from=function`) } },
    );
    const record = await fn.runEvent({ type: "track", event: "Order Completed" }, {});
    expect(record.returned).toEqual([201, { captured: true }, 201]);
    expect(egress.requests.map((r) => [r.method, r.url, r.headers["x-function-fetch-url"], r.headers["x-team"] ?? null, r.body.toString()])).toEqual([
      ["POST", "/capture?from=function", "https://hooks.slack.com/services/T0/B0/XYZ", "a", '{"text":"Order Completed"}'],
      ["PUT", "/capture?from=function", "https://api.example.com/users/2", null, "x"],
    ]);
    expect(record.fetches.map((f) => [f.method, f.url, f.sentTo, f.status])).toEqual([
      ["POST", "https://hooks.slack.com/services/T0/B0/XYZ", `${egress.url}/capture?from=function`, 201],
      ["PUT", "https://api.example.com/users/2", `${egress.url}/capture?from=function`, 201],
    ]);
  });

  it("egress with a secret signs each request's body as the destination signs a webhook, so a listen with that secret accepts it", async () => {
    const egress = await server();
    const fn = load(
      "async function onTrack() { await fetch('https://api.example.com/a', { method: 'POST', body: '{\"n\":1}' }); await fetch('https://api.example.com/b') }",
      {
        egress: { url: new URL(egress.url), secret: "s3cret" },
      },
    );
    await fn.runEvent({ type: "track" }, {});
    expect(egress.requests.map((r) => [r.headers["x-signature"], verify("s3cret", r.body, r.headers["x-signature"])])).toEqual([
      [sign("s3cret", '{"n":1}'), true],
      [sign("s3cret", ""), true],
    ]);
  });

  it("promise chains work as the library's functions write them: .then(res => res.json()).then(…).catch(…)", async () => {
    const api = await server(json(200, { users: [{ name: "workspaces/w/users/u1", email: "u1@x.test" }] }));
    const fn = load(`async function onTrack(event, settings) {
      return fetch(settings.url, { method: 'get', headers: { 'cache-control': 'no-cache' } })
        .then((res) => res.json())
        .then((json) => json.users.find((user) => user.name.endsWith('/' + event.userId)).email)
        .catch((err) => 'not found: ' + err.message)
    }`);
    expect((await fn.runEvent({ type: "track", userId: "u1" }, { url: api.url })).returned).toBe("u1@x.test");
    expect((await fn.runEvent({ type: "track", userId: "u2" }, { url: api.url })).returned).toMatch(/^not found: Cannot read properties of undefined/);
  });

  it("a request that gets no answer is recorded with why; the function sees fetch's own error and can turn it into a RetryError", async () => {
    const gone = await server();
    const url = gone.url;
    await gone.close();
    const fn = load(`async function onTrack(event, settings) {
      try { await fetch(settings.url) } catch (err) { throw new RetryError(err.message + ': ' + err.cause.code) }
    }`);
    const record = await fn.runEvent({ type: "track" }, { url });
    expect(record.outcome).toEqual({ kind: "retry", errorType: "Retry", reason: "RetryError: fetch failed: ECONNREFUSED" });
    expect(record.fetches).toEqual([{ method: "GET", url: `${url}/`, status: null, ms: expect.any(Number), error: expect.stringMatching(/ECONNREFUSED/) }]);
  });

  it("node-fetch's timeout option is honoured (virtual time), with node-fetch's error", async () => {
    const silent = await server(() => {});
    const clock = new VirtualClock(0);
    const fn = load("async function onTrack(e, s) { try { await fetch(s.url, { timeout: 1000 }) } catch (err) { return [err.name, err.message] } }", { clock });
    const running = fn.runEvent({ type: "track" }, { url: silent.url });
    await expect.poll(() => silent.requests.length).toBe(1);
    await clock.advance(1000);
    const record = await running;
    expect(record.returned).toEqual(["FetchError", `network timeout at: ${silent.url}/`]);
    expect(record.fetches[0]).toMatchObject({ status: null, error: `network timeout at: ${silent.url}/` });
  });

  it("a request still running when its invocation ends is aborted", async () => {
    let closed = 0;
    const silent = await server((_req, res) => {
      res.on("close", () => closed++);
    });
    const clock = new VirtualClock(0);
    const fn = load("async function onTrack(e, s) { await fetch(s.url) }", { clock });
    const running = fn.runEvent({ type: "track" }, { url: silent.url });
    await expect.poll(() => silent.requests.length).toBe(1);
    await clock.advance(5000);
    const record = await running;
    expect(record.outcome.kind).toBe("retry");
    await expect.poll(() => closed).toBe(1);
  });
});
