import { EventEmitter, once } from "node:events";
import type { IncomingMessage } from "node:http";
import { getDefaultHighWaterMark, PassThrough } from "node:stream";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { readBody, type EncodedBodyHandlers } from "../../src/http/body-reader.js";
import type { ContentCoding } from "../../src/http/inflate.js";
import { BodyBudget } from "../../src/http/limits.js";

/*
 * The one body reader on a request stream: a PassThrough stands for the request and an emitter for
 * its socket, so a test sees what node:http does not show (how the sender is paused, which listeners
 * the socket gets). Over real connections: test/integration/inflate-request.test.ts (serve's
 * compressed bodies) and the receivers' tests.
 */

const LIMIT = 500 * 1024;
const body = Buffer.from(JSON.stringify({ batch: [{ type: "track", userId: "u1", event: "Signed Up" }], writeKey: "wk" }));
const BOMB_MEMBER = gzipSync(Buffer.alloc(16 * 1024 * 1024));

type Request = PassThrough & { headers: Record<string, string>; socket: EventEmitter; complete: boolean };

/** A request stream on `socket` (a keep-alive socket carries many). */
function requestOn(socket: EventEmitter, headers: Record<string, string> = {}): Request {
  const req = Object.assign(new PassThrough(), { headers, socket, complete: false });
  req.once("end", () => (req.complete = true));
  return req;
}

/** The reader's one handler call: what it was, and the body for `body`. */
function read(req: Request, budget: BodyBudget, coding: ContentCoding = "identity") {
  const calls: string[] = [];
  let settle = (): void => {};
  const settled = new Promise<void>((resolve) => (settle = resolve));
  let raw: Buffer | undefined;
  const record = (call: string): void => {
    calls.push(call);
    settle();
  };
  const handlers: EncodedBodyHandlers = {
    onBody: (bytes) => {
      raw = bytes;
      record("body");
    },
    onTooLarge: (size) => record(`too large ${size}`),
    onOverBudget: () => record("over budget"),
    onCorrupt: (message) => record(`corrupt: ${message}`),
  };
  const reading = readBody(req as unknown as IncomingMessage, LIMIT, budget, handlers, coding);
  return { calls, settled, reading, body: () => raw };
}

/** Whether the budget holds nothing: all of it can be taken at once. */
function empty(budget: BodyBudget): boolean {
  const all = budget.take(budget.limitBytes, budget.limitBytes + 1);
  budget.give(budget.limitBytes);
  return all;
}

describe("readBody", () => {
  it("reads a body that arrives in pieces, as is or inflating it, and gives its bytes back on release", async () => {
    const budget = new BodyBudget(1024 * 1024);
    for (const [coding, sent] of [
      ["identity", body],
      ["gzip", gzipSync(body)],
    ] as const) {
      const req = requestOn(new EventEmitter());
      const reading = read(req, budget, coding);
      for (let i = 0; i < sent.length; i += 7) req.write(sent.subarray(i, i + 7));
      req.end();
      await reading.settled;
      expect(reading.calls).toEqual(["body"]);
      expect(reading.body()).toEqual(body);
      expect(empty(budget)).toBe(false);
      reading.reading.release();
      expect(empty(budget)).toBe(true);
    }
  });

  it("refuses a declared length over the limit unread: its size as is, compressed over the compressed bound", () => {
    const budget = new BodyBudget(1024 * 1024);
    expect(read(requestOn(new EventEmitter(), { "content-length": String(LIMIT + 1) }), budget).calls).toEqual([`too large ${LIMIT + 1}`]);
    expect(read(requestOn(new EventEmitter(), { "content-length": String(LIMIT + 1) }), budget, "gzip").calls).toEqual([]);
    expect(read(requestOn(new EventEmitter(), { "content-length": String(2 * LIMIT) }), budget, "gzip").calls).toEqual(["too large null"]);
  });

  it("stops a bomb streamed without end at the limit, and pauses the sender while zlib catches up", async () => {
    const budget = new BodyBudget(1024 * 1024);
    const req = requestOn(new EventEmitter());
    const reading = read(req, budget, "gzip");
    let written = 0;
    let answered = false;
    void reading.settled.then(() => (answered = true));
    // A sender that never ends and writes as fast as the reader takes, as a socket does.
    while (!answered && written < 64 * BOMB_MEMBER.length) {
      written += BOMB_MEMBER.length;
      if (!req.write(BOMB_MEMBER)) await Promise.race([once(req, "drain"), reading.settled]);
    }
    expect(reading.calls).toEqual(["too large null"]);
    // What streams buffer before the sender waits: the request's two sides and zlib's input, each at
    // Node's default high-water mark, plus what zlib holds. Without pausing the request, all 64 go.
    expect(written).toBeLessThanOrEqual(4 * getDefaultHighWaterMark(false) + 2 * BOMB_MEMBER.length);
    expect(empty(budget)).toBe(true);
  });

  it("refuses a body past the shared budget, and gives back what it took", async () => {
    const budget = new BodyBudget(64 * 1024);
    const held = budget.take(60 * 1024, 100 * 1024);
    expect(held).toBe(true);
    const req = requestOn(new EventEmitter());
    const reading = read(req, budget, "gzip");
    req.write(gzipSync(Buffer.alloc(200 * 1024, "x")));
    await reading.settled;
    expect(reading.calls).toEqual(["over budget"]);
    budget.give(60 * 1024);
    expect(empty(budget)).toBe(true);
  });

  it("a body cut short by its socket closing calls nothing, stops inflating and gives its bytes back", { timeout: 5_000 }, async () => {
    const budget = new BodyBudget(1024 * 1024);
    for (const coding of ["identity", "gzip"] as const) {
      const socket = new EventEmitter();
      const req = requestOn(socket);
      const reading = read(req, budget, coding);
      const packed = coding === "gzip" ? gzipSync(Buffer.alloc(300 * 1024, "y")) : Buffer.alloc(300 * 1024, "y");
      req.write(packed.subarray(0, packed.length - 10));
      await new Promise((resolve) => setImmediate(resolve));
      // The sender is gone: node:http closes the socket and destroys the request, which never ends.
      // zlib holds input it has not inflated yet; inflated later, it would take bytes never given back.
      socket.emit("close");
      req.destroy();
      await once(req, "close");
      // Stopped means zlib's stream closed (a white-box look: nothing else tells); nothing comes after that.
      const zlib = (reading.reading as unknown as { inflater?: { zlib?: EventEmitter & { closed: boolean } } }).inflater?.zlib;
      if (zlib && !zlib.closed) await once(zlib, "close");
      expect(reading.calls).toEqual([]);
      expect(empty(budget)).toBe(true);
    }
  });

  it("gives a keep-alive socket one close listener for all its bodies, plain or compressed", async () => {
    const socket = new EventEmitter();
    let added = 0;
    socket.on("newListener", (event) => {
      if (event === "close") added++;
    });
    const budget = new BodyBudget(1024 * 1024);
    for (let i = 0; i < 20; i++) {
      const req = requestOn(socket);
      const reading = read(req, budget, i % 2 === 0 ? "gzip" : "identity");
      req.end(i % 2 === 0 ? gzipSync(body) : body);
      await reading.settled;
      reading.reading.release();
    }
    expect(added).toBe(1);
    expect(socket.listenerCount("close")).toBe(1);
  });
});
