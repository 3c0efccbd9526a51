import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { parseRequestFile } from "../../src/functions/request-file.js";
import { requestFromPayload, urlWithQuery } from "../../src/functions/request.js";
import { FunctionModule } from "../../src/functions/runtime.js";
import { VirtualClock } from "../../src/util/clock.js";

// Source functions written here, on provider payloads written here (docs/functions.md#source-functions).
const opened: FunctionModule[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fn) => fn.close()));
});

function load(code: string): FunctionModule {
  const fn = new FunctionModule(code, "source.js", { clock: new VirtualClock(0, { autoAdvance: true }) });
  opened.push(fn);
  return fn;
}

const issueOpened = {
  body: { action: "opened", issue: { number: 7, title: "Crash on start" }, sender: { id: 4242, login: "octo" } },
  headers: { "X-GitHub-Event": "issues", Accept: ["application/json", "text/plain"] },
  queryParameters: { source: "gh", tag: ["a", "b"] },
};

describe("the request", () => {
  it("json() gives the body itself, synchronously; text(), headers (any case, lists joined) and url as the service gives them", async () => {
    const fn = load(
      "async function onRequest(request) { const body = request.json(); return [body instanceof Promise, body.sender.id, request.text().length > 10, request.headers.get('x-github-event'), request.headers.get('accept'), request.url.searchParams.getAll('tag'), request.url.href] }",
    );
    const record = await fn.runRequest(requestFromPayload(issueOpened), {});
    expect(record.returned).toEqual([
      false,
      4242,
      true,
      "issues",
      "application/json, text/plain",
      ["a", "b"],
      "https://fn.segmentapis.com/?source=gh&tag=a&tag=b",
    ]);
  });

  it("a text body is parsed by json() on demand, once; bad JSON is the function's own SyntaxError", async () => {
    const fn = load("async function onRequest(request) { return [request.text(), request.json() === request.json()] }");
    expect((await fn.runRequest(requestFromPayload({ body: '{"a":1}' }), {})).returned).toEqual(['{"a":1}', true]);
    const bad = await load("async function onRequest(request) { request.json() }").runRequest(requestFromPayload({ body: "a=1&b=2" }), {});
    expect(bad.outcome).toMatchObject({ kind: "failed", errorType: "Bad Request", reason: expect.stringMatching(/^SyntaxError: Unexpected token/) });
  });

  it("the URL: as given, or the function's with the query (text or names to values)", () => {
    expect(urlWithQuery(undefined)).toBe("https://fn.segmentapis.com/");
    expect(urlWithQuery("a=1")).toBe("https://fn.segmentapis.com/?a=1");
    expect(urlWithQuery("?a=1")).toBe("https://fn.segmentapis.com/?a=1");
    expect(requestFromPayload({ body: {}, url: "https://example.com/hook?x=1", queryParameters: "ignored=1" }).url.href).toBe("https://example.com/hook?x=1");
  });
});

describe("Segment calls", () => {
  const emitAll = `async function onRequest(request, settings) {
    const { sender, issue } = request.json()
    const userId = String(sender.id)
    Segment.identify({ userId, traits: { login: sender.login }, properties: { dropped: true } })
    Segment.track({ event: 'Issue Opened', userId, properties: { number: issue.number }, context: { source: settings.source } })
    Segment.page({ anonymousId: 'anon-1', name: 'Issues' })
    Segment.screen({ userId, name: '' })
    Segment.group({ userId, groupId: 'g1', traits: { plan: 'pro' } })
    Segment.alias({ userId, previousId: 'octo' })
    Segment.set({ collection: 'issues', id: String(issue.number), properties: { title: issue.title } })
    return 'ok'
  }`;

  it("each call becomes a message of its type with only its own fields that have a value; set makes an object", async () => {
    const record = await load(emitAll).runRequest(requestFromPayload(issueOpened), { source: "github" });
    expect(record.outcome).toEqual({ kind: "delivered" });
    expect(record.messages).toEqual([
      { type: "identify", traits: { login: "octo" }, userId: "4242" },
      { type: "track", event: "Issue Opened", properties: { number: 7 }, userId: "4242", context: { source: "github" } },
      { type: "page", name: "Issues", anonymousId: "anon-1" },
      { type: "screen", userId: "4242" },
      { type: "group", groupId: "g1", traits: { plan: "pro" }, userId: "4242" },
      { type: "alias", previousId: "octo", userId: "4242" },
    ]);
    expect(record.objects).toEqual([{ collection: "issues", id: "7", properties: { title: "Crash on start" } }]);
  });

  it("a call missing what its type needs throws ValidationError, as the service's does", async () => {
    const cases = {
      "Segment.track({ userId: 'u' })": "event is required but not defined",
      "Segment.group({ userId: 'u', groupId: '' })": "groupId is required but not defined",
      "Segment.alias({ userId: 'u' })": "previousId is required but not defined",
      "Segment.identify({ traits: {} })": "One of userId,anonymousId is required but not defined",
      "Segment.set({ collection: 'c' })": "id is required but not defined",
    };
    for (const [call, message] of Object.entries(cases)) {
      const record = await load(`async function onRequest() { ${call} }`).runRequest(requestFromPayload({ body: {} }), {});
      expect(record.outcome).toEqual({ kind: "failed", errorType: "Message Rejected", reason: `ValidationError: ${message}` });
    }
  });

  it("a batch body (a JSON array, as SendGrid posts) is iterated; an anonymousId from an email's MD5", async () => {
    const fn = load(`async function onRequest(request) {
      request.json().forEach((item) => {
        if (!item.email) return
        Segment.track({ event: 'Email ' + item.event, anonymousId: crypto.createHash('md5').update(item.email).digest('hex'), context: { traits: { email: item.email } } })
      })
    }`);
    const record = await fn.runRequest(
      requestFromPayload({ body: [{ email: "a@x.test", event: "delivered" }, { event: "processed" }, { email: "b@x.test", event: "open" }] }),
      {},
    );
    expect(record.messages.map((m) => [m.event, m.anonymousId])).toEqual([
      ["Email delivered", createHash("md5").update("a@x.test").digest("hex")],
      ["Email open", createHash("md5").update("b@x.test").digest("hex")],
    ]);
  });

  it("a failed invocation keeps what it emitted in its record, but its outcome is not delivered (nothing would be sent)", async () => {
    const record = await load("async function onRequest() { Segment.track({ event: 'A', userId: 'u' }); throw new RetryError('later') }").runRequest(
      requestFromPayload({ body: {} }),
      {},
    );
    expect(record.outcome.kind).toBe("retry");
    expect(record.messages).toHaveLength(1);
  });

  it("a message over 32 KB fails the invocation; a message is kept as sent, later changes to the object do not reach it", async () => {
    const big = await load("async function onRequest() { Segment.track({ event: 'A', userId: 'u', properties: { blob: 'x'.repeat(33000) } }) }").runRequest(
      requestFromPayload({ body: {} }),
      {},
    );
    expect(big.outcome).toMatchObject({ kind: "failed", errorType: "Message Too Large" });
    const kept = await load("async function onRequest() { const p = { n: 1 }; Segment.track({ event: 'A', userId: 'u', properties: p }); p.n = 2 }").runRequest(
      requestFromPayload({ body: {} }),
      {},
    );
    expect(kept.messages[0]).toMatchObject({ properties: { n: 1 } });
  });

  it("calls from invocations running at once stay with their own invocation; a call at load is refused", async () => {
    const fn = load(
      "async function onRequest(request) { const { n } = request.json(); await new Promise((r) => setTimeout(r, 10 - n)); Segment.track({ event: 'E' + n, userId: 'u' }) }",
    );
    const [a, b] = await Promise.all([fn.runRequest(requestFromPayload({ body: { n: 1 } }), {}), fn.runRequest(requestFromPayload({ body: { n: 2 } }), {})]);
    expect([a.messages, b.messages]).toEqual([[{ type: "track", event: "E1", userId: "u" }], [{ type: "track", event: "E2", userId: "u" }]]);
    expect(() => load("Segment.track({ event: 'x', userId: 'u' })\nasync function onRequest() {}")).toThrow(
      /threw while loading: Error: Segment\.track was called outside an invocation/,
    );
  });

  it("a source function refuses events, a destination refuses requests", async () => {
    const refused = await load("async function onRequest() {}")
      .runEvent({ type: "track" }, {})
      .catch((error: InputError) => error.describe());
    expect(refused).toBe("source.js: is a source function: give it a request (--request FILE), not events");
    await expect(load("async function onTrack() {}").runRequest(requestFromPayload({ body: {} }), {})).rejects.toThrow(InputError);
  });
});

describe("a test request file (the functions library's webhook-examples format)", () => {
  it("is accepted as is, settings included", () => {
    const file = parseRequestFile(JSON.stringify({ payload: issueOpened, settings: { source: "x" } }), "issue.json");
    expect(file).toEqual({ payload: issueOpened, settings: { source: "x" }, warnings: [] });
  });

  it("names what is wrong by key", () => {
    const error = (document: unknown) => {
      try {
        parseRequestFile(typeof document === "string" ? document : JSON.stringify(document), "r.json");
      } catch (e) {
        return (e as InputError).describe();
      }
      return "accepted";
    };
    expect(error("{")).toMatch(/^r\.json: not valid JSON: /);
    expect(error({ body: {} })).toBe('r.json: key "payload": missing, or not an object with the request\'s body, headers and queryParameters');
    expect(error({ payload: { headers: {} } })).toBe('r.json: key "payload.body": missing: the request\'s body (a JSON value, or text)');
    expect(error({ payload: { body: 1 } })).toBe('r.json: key "payload.body": a body is text or JSON, not number');
    expect(error({ payload: { body: {}, headers: { a: 1 } } })).toBe('r.json: key "payload.headers": names to a text value, or to a list of them');
    expect(error({ payload: { body: {}, url: "/relative" } })).toBe('r.json: key "payload.url": not an absolute URL');
    expect(error({ payload: { body: "x".repeat(512 * 1024 + 1) } })).toBe('r.json: key "payload.body": over the service\'s 512 KiB limit for a webhook body');
    expect(error({ payload: { body: {} }, settings: [1] })).toBe('r.json: key "settings": settings must be a JSON object, not an array');
  });

  it("says so when the query is under `queryParams`, which neither the format nor the service's shim reads", () => {
    expect(parseRequestFile('{"payload":{"body":{},"queryParams":{"a":"1"}}}', "r.json").warnings).toEqual([
      'r.json: key "payload.queryParams" is not read: the format names the query "queryParameters" (the service\'s shim ignores it too)',
    ]);
  });
});
