import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Stripe from "stripe";
import { afterEach, describe, expect, it } from "vitest";
import { collect, spawnCli, waitForLine } from "../helpers/cli.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { jsonEvents, runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { killChildrenAfterEach, tempDir } from "../helpers/setup.js";

// serve's functions (docs/serve-api.md#source-functions, docs/functions.md#as-a-destination):
// `--source-function` answers POST /functions/NAME with the service's request, answers and limits,
// its Segment calls queued as a client's calls are (durably, before the 2xx); `--function` delivers
// the queue to a destination function.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURES = join(ROOT, "fixtures/functions");
const GITHUB = JSON.parse(JSON.stringify((await import("../../fixtures/functions/github-issue-opened.json", { with: { type: "json" } })).default)) as {
  payload: { body: Record<string, unknown> };
};
const { dir, file } = tempDir("webhook-cli-serve-functions-");
const children = killChildrenAfterEach();
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const LISTENING = /(?:Listening on |"url":")(http[^"\s]+)/;

async function serveInProcess(args: string[]): Promise<{ run: InProcessRun; url: string }> {
  const run = startInProcess(["serve", "--memory", "--port", "0", ...args], { cwd: dir });
  const [, url] = await run.waitFor(LISTENING, 15_000);
  return { run, url: url as string };
}

async function receiver(): Promise<TestServer> {
  const server = await startServer();
  servers.push(server);
  return server;
}

/** A POST with headers given as pairs (a name may repeat: sent as separate header lines). */
function post(url: string, body: string | Buffer, headers: [string, string][] = []): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST" }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || "{}") }));
    });
    const grouped = new Map<string, string[]>();
    for (const [name, value] of headers) grouped.set(name, [...(grouped.get(name) ?? []), value]);
    for (const [name, values] of grouped) req.setHeader(name, values.length === 1 ? (values[0] as string) : values);
    req.on("error", reject);
    req.end(body);
  });
}

const bodyOf = (request: { body: Buffer }) => JSON.parse(request.body.toString()) as Record<string, unknown>;

file(
  "echo.js",
  [
    "async function onRequest(request, settings) {",
    "  const body = request.json()",
    "  if (body.retry) throw new RetryError('later')",
    "  if (body.oops) throw 'oops'",
    "  Segment.track({ event: 'Echo', anonymousId: 'anon-1', properties: { query: request.url.search, href: request.url.href, multi: request.headers.get('X-Multi'),",
    "    sync: typeof body.then === 'undefined' && body.n, text: request.text(), key: settings.key }, extra: 'dropped' })",
    "  Segment.set({ collection: 'echoes', id: String(body.n), properties: { n: body.n } })",
    "}",
  ].join("\n"),
);

describe("serve --source-function", () => {
  it("POST /functions/NAME: the request as the service gives it; each Segment call queued as a client's call, then forwarded", async () => {
    const hook = await receiver();
    const serve = await serveInProcess(["--url", `${hook.url}/hook`, "--source-function", "echo.js", "--settings", 'echo={"key":"k1"}']);
    const answer = await post(`${serve.url}/functions/echo?a=1&b=two&b=2`, '{"n":7}', [
      ["Content-Type", "application/json"],
      ["X-Multi", "first"],
      ["X-Multi", "second"],
    ]);
    expect(answer).toEqual({ status: 200, body: { success: true } });
    await expect.poll(() => hook.requests.length).toBe(1);
    const message = bodyOf(hook.requests[0] as { body: Buffer });
    expect(message).toMatchObject({
      version: 1,
      type: "track",
      event: "Echo",
      anonymousId: "anon-1",
      properties: { query: "?a=1&b=two&b=2", href: "https://fn.segmentapis.com/?a=1&b=two&b=2", multi: "first, second", sync: 7, text: '{"n":7}', key: "k1" },
      context: { function: { name: "echo" }, ip: "127.0.0.1" },
      messageId: expect.stringMatching(/^api-[0-9a-f-]{36}$/),
    });
    expect(message).not.toHaveProperty("extra");
    expect(Date.parse(message["receivedAt"] as string)).toBeGreaterThan(Date.now() - 60_000);
    expect(message["timestamp"]).toBe(message["receivedAt"]);
    const health = (await (await fetch(`${serve.url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ accepted: 1, delivered: 1, objects: 1, routes: { "/functions/{name}": 1 } });
    serve.run.stop();
    const { stdout } = await serve.run.done;
    expect(stdout).toMatch(/✓ POST \/functions\/echo → onRequest accepted: 1 message, 1 object, answered 200 \(\d+ms\)\n {4}Segment\.track: /);
    expect(stdout).toContain('    Segment.set: {"collection":"echoes","id":"7","properties":{"n":7}}');
    expect(stdout).toContain("1 delivered, 0 retrying, 0 failed, 0 pending, 1 objects");
  });

  it("the service's answers: a rejected webhook 400, a retry 500, a thrown string 400 named; unknown names 404, GET 405, over 512 KiB 413; nothing queued", async () => {
    const hook = await receiver();
    const serve = await serveInProcess([
      "--url",
      `${hook.url}/hook`,
      "--source-function",
      "echo.js",
      "--source-function",
      `gh=${join(FIXTURES, "github-source.js")}`,
      "--json",
    ]);
    const no = await post(`${serve.url}/functions/gh`, "{}");
    expect(no).toEqual({
      status: 400,
      body: { success: false, message: "Message Rejected: InvalidEventPayload: not a GitHub webhook: no X-GitHub-Event header", code: "function_error" },
    });
    expect(await post(`${serve.url}/functions/echo`, '{"retry":true}')).toMatchObject({ status: 500, body: { message: "Retry: RetryError: later" } });
    expect(await post(`${serve.url}/functions/echo`, '{"oops":true}')).toMatchObject({
      status: 400,
      body: { message: 'Bad Request: threw a string, not an Error: "oops"' },
    });
    expect(await post(`${serve.url}/functions/echo`, "not json")).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/^Bad Request: SyntaxError: /) },
    });
    expect(await post(`${serve.url}/functions/nope`, "{}")).toMatchObject({
      status: 404,
      body: { message: "no source function named nope: serve runs /functions/echo, /functions/gh" },
    });
    expect((await fetch(`${serve.url}/functions/echo`)).status).toBe(405);
    const big = await post(`${serve.url}/functions/echo`, Buffer.alloc(512 * 1024 + 1, "a"));
    expect(big).toMatchObject({ status: 413, body: { code: "request_too_large" } });
    const issue = await post(`${serve.url}/functions/gh`, JSON.stringify(GITHUB.payload.body), [["X-GitHub-Event", "issues"]]);
    expect(issue.status).toBe(200);
    await expect.poll(() => hook.requests.length).toBe(1);
    expect(bodyOf(hook.requests[0] as { body: Buffer })).toMatchObject({
      type: "track",
      event: "issues opened",
      userId: "5150",
      context: { function: { name: "gh" } },
    });
    serve.run.stop();
    const events = jsonEvents((await serve.run.done).stdout, "function");
    expect(events.map((event) => [event["name"], event["status"], (event["outcome"] as { kind: string }).kind])).toEqual([
      ["gh", 400, "failed"],
      ["echo", 500, "retry"],
      ["echo", 400, "failed"],
      ["echo", 400, "failed"],
      ["gh", 200, "delivered"],
    ]);
  });

  it("a page's request does not run a source function (an Origin, or Sec-Fetch-Site), unless --allow-origin names that page", async () => {
    const hook = await receiver();
    const serve = await serveInProcess(["--url", `${hook.url}/hook`, "--source-function", "echo.js"]);
    const page = await post(`${serve.url}/functions/echo`, '{"n":1}', [["Origin", "https://evil.example"]]);
    expect(page).toMatchObject({
      status: 403,
      body: {
        code: "forbidden",
        message: expect.stringMatching(/^a source function takes webhooks from servers, not requests from pages: https:\/\/evil\.example refused/),
      },
    });
    const noCors = await post(`${serve.url}/functions/echo`, '{"n":2}', [["Sec-Fetch-Site", "cross-site"]]);
    expect(noCors.status).toBe(403);
    serve.run.stop();
    expect((await serve.run.done).stdout).not.toContain("/functions/echo →");
    const allowing = await serveInProcess(["--url", `${hook.url}/hook`, "--source-function", "echo.js", "--allow-origin", "http://localhost:3000"]);
    expect((await post(`${allowing.url}/functions/echo`, '{"n":3}', [["Origin", "http://localhost:3000"]])).status).toBe(200);
    expect((await post(`${allowing.url}/functions/echo`, '{"n":4}', [["Origin", "http://localhost:3001"]])).status).toBe(403);
    await expect.poll(() => hook.requests.length).toBe(1);
    allowing.run.stop();
    await allowing.run.done;
  });

  it("a Stripe-signed webhook (webhook-cli sign --scheme stripe, and Stripe's own library) goes straight into a source function that verifies it", async () => {
    const hook = await receiver();
    const secret = "whsec_e2e_functions";
    const serve = await serveInProcess([
      "--url",
      `${hook.url}/hook`,
      "--source-function",
      `stripe=${join(FIXTURES, "stripe-source.js")}`,
      "--settings",
      `stripe={"endpointSecret":"${secret}"}`,
    ]);
    const event = {
      id: "evt_1",
      object: "event",
      type: "customer.created",
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: "cus_1", object: "customer", email: "ada@example.com", name: "Ada" } },
    };
    const body = JSON.stringify(event);
    const bodyFile = file("stripe-event.json", body);
    const signed = await runInProcess(["sign", "--scheme", "stripe", "--secret", secret, "--json", bodyFile], { cwd: dir });
    const header = (jsonEvents(signed.stdout, "signed")[0] as { headers: Record<string, string> }).headers["Stripe-Signature"] as string;
    expect(await post(`${serve.url}/functions/stripe`, body, [["Stripe-Signature", header]])).toEqual({ status: 200, body: { success: true } });

    const library = new Stripe("sk_test_unused").webhooks.generateTestHeaderString({ payload: body.replace("Ada", "Ada L."), secret });
    expect((await post(`${serve.url}/functions/stripe`, body.replace("Ada", "Ada L."), [["Stripe-Signature", library]])).status).toBe(200);

    const tampered = await post(`${serve.url}/functions/stripe`, body.replace("ada@", "eve@"), [["Stripe-Signature", header]]);
    expect(tampered).toMatchObject({ status: 400, body: { message: "Message Rejected: ValidationError: Stripe-Signature does not match the body" } });
    await expect.poll(() => hook.requests.length).toBe(2);
    expect(hook.requests.map((request) => (bodyOf(request) as { traits: { name: string } }).traits.name)).toEqual(["Ada", "Ada L."]);
    serve.run.stop();
    await serve.run.done;
  });

  it("with --function, what a source function emits goes on to the destination function, whose requests go to --function-egress", async () => {
    const egress = await receiver();
    file(
      "forward.js",
      "async function onTrack(event) { await fetch('https://api.example.com/events', { method: 'POST', body: JSON.stringify({ name: event.event }) }); return 'ok' }",
    );
    const serve = await serveInProcess(["--function", "forward.js", "--source-function", "echo.js", "--function-egress", `${egress.url}/egress`]);
    expect((await post(`${serve.url}/functions/echo`, '{"n":1}')).status).toBe(200);
    await expect.poll(() => egress.requests.length).toBe(1);
    expect(egress.requests[0]?.headers["x-function-fetch-url"]).toBe("https://api.example.com/events");
    expect(bodyOf(egress.requests[0] as { body: Buffer })).toEqual({ name: "Echo" });
    serve.run.stop();
    const { stdout } = await serve.run.done;
    expect(stdout).toMatch(
      /✓ function:forward\.js onTrack: delivered \(\d+ms\)\n {4}returned: "ok"\n {4}fetch POST https:\/\/api\.example\.com\/events → 200 \(/,
    );
  });

  it("a destination function that needs a package not installed stops serve (exit 2, naming it); its message stays queued for the next run", async () => {
    const state = join(dir, "state-setup");
    file("needs-lodash.js", "async function onTrack(event) { return _.isString(event.event) }");
    const run = startInProcess(["serve", "--port", "0", "--state", state, "--function", "needs-lodash.js", "--write-key", "wk"], { cwd: dir });
    const [, url] = await run.waitFor(LISTENING, 15_000);
    const answer = await post(`${url}/v1/track`, JSON.stringify({ writeKey: "wk", userId: "u1", event: "Needs lodash" }));
    expect(answer.status).toBe(200);
    const done = await run.done;
    expect(done.code).toBe(2);
    expect(done.stderr).toMatch(
      /error: needs-lodash\.js: `_` is lodash 4\.17\.19 in the service's runtime, and it is not installed here .*npm install --save-dev lodash@4\.17\.19/,
    );
    expect(done.stderr).toContain(`1 message kept in ${state} for the next run`);
    const hook = await receiver();
    const again = startInProcess(["serve", "--port", "0", "--state", state, "--url", `${hook.url}/hook`], { cwd: dir });
    await again.waitFor(LISTENING, 15_000);
    await expect.poll(() => hook.requests.length).toBe(1);
    expect(bodyOf(hook.requests[0] as { body: Buffer })).toMatchObject({ type: "track", event: "Needs lodash", userId: "u1" });
    again.stop();
    expect((await again.done).code).toBe(0);
  });

  it("bad input exits 2 before serve listens: a destination function given as a source, a name twice, settings for no such function", async () => {
    file("dest-only.js", "async function onTrack() {}");
    const cases: [string[], RegExp][] = [
      [["--source-function", "dest-only.js"], /error: dest-only\.js: is a destination function: --source-function takes a source function/],
      [["--function", "echo.js"], /error: echo\.js: is a source function \(onRequest\)/],
      [["--source-function", "echo.js", "--source-function", "x/echo.js"], /two source functions named echo/],
      [["--source-function", "echo.js", "--settings", "nope={}"], /error: --settings: no source function named nope/],
      [["--settings", "{}"], /error: --settings: --settings goes with --function or --source-function/],
      [["--source-function", "bad name=echo.js"], /cannot name a route/],
      [["--function-egress", "http://127.0.0.1:9/x"], /--function-egress applies to the requests functions make/],
    ];
    for (const [args, message] of cases) {
      const result = await runInProcess(["serve", "--memory", "--port", "0", ...args], { cwd: dir });
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stdout).not.toContain("Listening");
    }
  });
});

describe("serve --source-function, durability (built CLI)", { tags: ["smoke"] }, () => {
  it("SIGKILLed after answering 2xx: every call of those webhooks is delivered after a restart", async () => {
    const state = join(dir, "state-kill");
    const args = ["serve", "--port", "0", "--state", state, "--source-function", `gh=${join(FIXTURES, "github-source.js")}`];
    const first = spawnCli(args);
    children.push(first);
    const firstDone = collect(first, 60_000);
    const [, url] = await waitForLine(first, LISTENING, 15_000);
    const total = 40;
    const answers = await Promise.all(
      Array.from({ length: total }, (_, i) =>
        post(`${url}/functions/gh`, JSON.stringify({ ...GITHUB.payload.body, sender: { login: `u${i}`, id: i } }), [["X-GitHub-Event", "issues"]]),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    first.kill("SIGKILL");
    expect((await firstDone).signal).toBe("SIGKILL");

    const hook = await receiver();
    const second = spawnCli(["serve", "--port", "0", "--state", state, "--url", `${hook.url}/hook`]);
    children.push(second);
    const secondDone = collect(second, 60_000);
    await waitForLine(second, LISTENING, 15_000);
    await expect.poll(() => hook.requests.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(total);
    const users = hook.requests.map((request) => bodyOf(request)["userId"]);
    expect(new Set(users)).toEqual(new Set(Array.from({ length: total }, (_, i) => String(i))));
    second.kill("SIGTERM");
    expect((await secondDone).code).toBe(0);
  }, 60_000);
});
