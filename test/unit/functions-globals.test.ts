import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FunctionModule, type FunctionOptions } from "../../src/functions/runtime.js";
import { VirtualClock } from "../../src/util/clock.js";
import { tempDir } from "../helpers/setup.js";

// The runtime's globals (docs/functions.md#globals), as the library's functions use them.
const opened: FunctionModule[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fn) => fn.close()));
});
const { dir } = tempDir("webhook-cli-functions-");

function load(code: string, options: FunctionOptions = {}): FunctionModule {
  const fn = new FunctionModule(code, "globals.js", { clock: new VirtualClock(0, { autoAdvance: true }), resolveFrom: [dir], ...options });
  opened.push(fn);
  return fn;
}

async function run(body: string, options?: FunctionOptions): Promise<unknown> {
  const record = await load(`async function onTrack(event, settings) { ${body} }`, options).runEvent({ type: "track" }, {});
  if (record.outcome.kind !== "delivered") throw new Error(`${record.outcome.kind}: ${record.outcome.reason}`);
  return record.returned;
}

describe("web and Node globals", () => {
  it("btoa and atob behave as the service's npm packages do, not as WHATWG's", async () => {
    // A character past U+00FF keeps its low byte instead of throwing; bad base64 decodes leniently.
    expect(await run("return [btoa('user:'), btoa('\u2713'), atob('dXNlcjo='), atob('###'), typeof btoa(Buffer.from('x'))]")).toEqual([
      "dXNlcjo=",
      "Ew==",
      "user:",
      "",
      "string",
    ]);
    await expect(run("return btoa(undefined)")).rejects.toThrow(/^failed: TypeError: Cannot read properties of undefined/);
  });

  it("crypto is Node's module (createHash for a Gravatar or an anonymousId), Buffer is Node's", async () => {
    expect(
      await run("return [crypto.createHash('md5').update('peter@initech.com').digest('hex'), typeof crypto.randomUUID(), Buffer.from('hi').toString('hex')]"),
    ).toEqual([createHash("md5").update("peter@initech.com").digest("hex"), "string", "6869"]);
  });

  it("URL, URLSearchParams and Headers work as on the web; Headers is the same class fetch uses", async () => {
    const result = await run(
      "const url = new URL('https://api.example.com/v1?a=1'); url.searchParams.set('ts', '2'); const h = new Headers({ 'Content-Type': 'application/json' }); return [url.toString(), new URLSearchParams({ q: 'x y' }).toString(), h.get('content-type'), new Request('https://x.test', { headers: h }).headers.get('Content-Type')]",
    );
    expect(result).toEqual(["https://api.example.com/v1?a=1&ts=2", "q=x+y", "application/json", "application/json"]);
  });

  it("nothing of Node's own reaches the function: no require, process, module or exports", async () => {
    expect(await run("return [typeof require, typeof process, typeof module, typeof exports, typeof window, window === globalThis]")).toEqual([
      "undefined",
      "undefined",
      "undefined",
      "undefined",
      "object",
      true,
    ]);
  });
});

describe("cache", () => {
  it("load calls fn once per key until the TTL passes; concurrent loads share the call; delete drops it", async () => {
    const clock = new VirtualClock(0);
    const fn = load(
      "let calls = 0\nasync function onTrack(e) { if (e.event === 'delete') { cache.delete('token'); return } return Promise.all([cache.load('token', 1000, async () => ++calls), cache.load('token', 1000, async () => ++calls)]) }",
      { clock },
    );
    const value = async (event = "load") => (await fn.runEvent({ type: "track", event }, {})).returned;
    expect(await value()).toEqual([1, 1]);
    await clock.advance(999);
    expect(await value()).toEqual([1, 1]);
    await clock.advance(1);
    expect(await value()).toEqual([2, 2]);
    await value("delete");
    expect(await value()).toEqual([3, 3]);
  });

  it("a ttl of -1 or none never expires; a failed load is not kept", async () => {
    const clock = new VirtualClock(0);
    const fn = load(
      "let calls = 0\nasync function onTrack(e) { if (e.event === 'fail') return cache.load('f', -1, async () => { calls++; throw new Error('down') }).catch((err) => [err.message, calls]); return [await cache.load('a', -1, async () => ++calls), await cache.load('b', undefined, async () => ++calls)] }",
      { clock },
    );
    expect((await fn.runEvent({ type: "track" }, {})).returned).toEqual([1, 2]);
    await clock.advance(10 ** 9);
    expect((await fn.runEvent({ type: "track" }, {})).returned).toEqual([1, 2]);
    expect((await fn.runEvent({ type: "track", event: "fail" }, {})).returned).toEqual(["down", 3]);
    expect((await fn.runEvent({ type: "track", event: "fail" }, {})).returned).toEqual(["down", 4]);
  });
});

describe("third-party globals", () => {
  it("are taken from the user's project when installed there, on first use", async () => {
    const project = join(dir, "project");
    mkdirSync(join(project, "node_modules/lodash"), { recursive: true });
    writeFileSync(join(project, "node_modules/lodash/package.json"), '{"name":"lodash","main":"index.js"}');
    writeFileSync(join(project, "node_modules/lodash/index.js"), "module.exports = { isString: (v) => typeof v === 'string', installedHere: true };");
    expect(await run("return [_.isString('x'), _.isString(1), _.installedHere]", { resolveFrom: [join(dir, "elsewhere"), project] })).toEqual([
      true,
      false,
      true,
    ]);
  });

  it("one that is not installed fails the invocation with the package to install, not a ReferenceError", async () => {
    const record = await load("async function onTrack() { return moment().format() }").runEvent({ type: "track" }, {});
    expect(record.outcome).toEqual({
      kind: "failed",
      errorType: "Bad Request",
      setup: true,
      reason: `\`moment\` is moment-timezone 0.5.31 in the service's runtime, and it is not installed here (looked from ${dir}): npm install --save-dev moment-timezone@0.5.31`,
    });
  });

  it("namespaced ones too (google.cloud.storage), and touching the namespace alone costs nothing", async () => {
    expect(await run("return [typeof google, typeof google.cloud, typeof sendgrid]")).toEqual(["object", "object", "object"]);
    await expect(run("return google.cloud.storage")).rejects.toThrow("npm install --save-dev @google-cloud/storage@5.3.0");
  });

  it("the Node modules the service exposes need nothing installed, and may be reassigned as the docs do (zlib = zlib.zlib)", async () => {
    expect(await run("zlib = zlib.zlib; return [zlib.inflateSync(zlib.deflateSync('something')).toString(), typeof https.request]")).toEqual([
      "something",
      "function",
    ]);
  });
});
