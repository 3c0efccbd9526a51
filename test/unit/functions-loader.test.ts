import { afterEach, describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { FunctionModule } from "../../src/functions/runtime.js";
import { VirtualClock } from "../../src/util/clock.js";

// How a function file is loaded (docs/functions.md#how-a-function-is-loaded): as the service's
// runtime wraps it, with every problem named by file, line and column.
const opened: FunctionModule[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((fn) => fn.close()));
});

function load(code: string, limitMs = 5000): FunctionModule {
  const fn = new FunctionModule(code, "fn.js", { clock: new VirtualClock(0), limitMs });
  opened.push(fn);
  return fn;
}

function loadError(code: string, limitMs?: number): string {
  try {
    load(code, limitMs);
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return (error as InputError).describe();
  }
  throw new Error("loaded");
}

describe("loading a function file", () => {
  it("finds top-level handlers however they are defined, and tells a destination from a source", () => {
    const destination = load("async function onTrack() {}\nonIdentify = async () => 1\nfunction helper() {}");
    expect(destination.kind).toBe("destination");
    expect([destination.has("onTrack"), destination.has("onIdentify"), destination.has("onPage")]).toEqual([true, true, false]);
    expect(load("async function onRequest(request) {}").kind).toBe("source");
    expect(load("async function onBatch(events) {}").kind).toBe("destination");
  });

  it("strips a UTF-8 byte order mark, and keeps the file's own line numbers in errors", () => {
    expect(load("\uFEFFasync function onTrack() {}").has("onTrack")).toBe(true);
    expect(loadError("// one\n// two\nlet a = ;\n")).toBe("fn.js:3:9: SyntaxError: Unexpected token ';'");
  });

  it("a syntax error found only at the end of the file names its last line", () => {
    expect(loadError("async function onTrack() {\n  if (x) {\n")).toBe(
      "fn.js:3: SyntaxError: Unexpected end of input (a block, call or literal is not closed)",
    );
  });

  it("`const onTrack = …` is refused as the service's runtime refuses it, with what to write instead", () => {
    const message = loadError("\nconst onTrack = async (event) => {}");
    expect(message).toMatch(/^fn\.js:2:7: SyntaxError: Identifier 'onTrack' has already been declared: the runtime declares onTrack itself; write/);
    expect(message).toContain("`async function onTrack(…)`");
  });

  it("no handler, a handler that is not a function, and both kinds at once are refused", () => {
    expect(loadError("function track() {}")).toMatch(/^fn\.js: no handler: a destination function defines onTrack, .* a source function defines onRequest$/);
    expect(loadError("var onTrack = 42")).toBe("fn.js: onTrack is a number, not a function");
    expect(loadError("async function onRequest() {}\nasync function onTrack() {}")).toMatch(/^fn\.js: defines onRequest and onTrack: a function is a source/);
  });

  it("a throw while loading names the error and where it was thrown", () => {
    expect(loadError("async function onTrack() {}\nexports.processEvents = async () => {}")).toBe(
      "fn.js:2:1: threw while loading: ReferenceError: exports is not defined",
    );
    expect(loadError('async function onTrack() {}\nthrow "no"')).toBe('fn.js: threw while loading: a string, not an Error: "no"');
  });

  it("top-level code that never ends is stopped at the limit", () => {
    expect(loadError("async function onTrack() {}\nwhile (true) {}", 50)).toBe("fn.js: its top-level code ran over 0.05 s while loading (the service's limit)");
  });

  it("runs the top-level code once, in sloppy mode, with `this` the function's global", async () => {
    const fn = load("count = 0\nconst self = this\nasync function onTrack() { return [++count, self === globalThis, typeof require, typeof process] }");
    expect((await fn.runEvent({ type: "track" }, {})).returned).toEqual([1, true, "undefined", "undefined"]);
    expect((await fn.runEvent({ type: "track" }, {})).returned).toEqual([2, true, "undefined", "undefined"]);
  });

  it("a top-level `return` ends the code early, keeping the handlers declared so far (as the service's wrapper does)", async () => {
    const fn = load("async function onTrack() { return 1 }\nreturn\nonIdentify = async () => 2");
    expect([fn.has("onTrack"), fn.has("onIdentify")]).toEqual([true, false]);
  });
});
