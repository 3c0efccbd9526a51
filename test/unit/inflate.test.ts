import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { Duplex } from "node:stream";
import { deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { MAX_REQUEST_BYTES } from "../../src/messages/limits.js";
import {
  type ContentCoding,
  contentCodingOf,
  createInflater,
  type InflateHandlers,
  type InflateLimits,
  type Inflater,
  maxCompressedBytes,
} from "../../src/http/inflate.js";

const limits = { maxBytes: MAX_REQUEST_BYTES };
const body = Buffer.from(JSON.stringify({ batch: [{ type: "track", userId: "u1", event: "Signed Up" }], writeKey: "wk", sentAt: "2024-01-01T00:00:00.000Z" }));

/** A whole body decoded, or why not: `too_large` → 400 `request_too_large`, `corrupt` → 400 `invalid_request`. */
type InflateResult =
  | { ok: true; body: Buffer }
  | { ok: false; reason: "too_large"; what: "inflated" | "compressed" }
  | { ok: false; reason: "corrupt"; message: string; zlibCode: string | undefined };

/** A body already in memory through one inflater (within the same limits): what the inflater tells, as one result. */
function inflateBuffer(body: Buffer, coding: ContentCoding, limits: InflateLimits): Promise<InflateResult> {
  if (coding === "identity") {
    return Promise.resolve(body.length > limits.maxBytes ? { ok: false, reason: "too_large", what: "inflated" } : { ok: true, body });
  }
  return new Promise((resolve) => {
    const inflater = createInflater(coding, limits, collect(resolve));
    inflater.write(body);
    inflater.end();
  });
}

/** Handlers that gather the inflated chunks into one result. */
function collect(done: (result: InflateResult) => void): InflateHandlers {
  let chunks: Buffer[] = [];
  return {
    onData: (chunk) => {
      chunks.push(chunk);
      return true;
    },
    onEnd: (total) => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
      chunks = [];
      done({ ok: true, body });
    },
    onTooLarge: (what) => {
      chunks = [];
      done({ ok: false, reason: "too_large", what });
    },
    onCorrupt: (message, zlibCode) => {
      chunks = [];
      done({ ok: false, reason: "corrupt", message, zlibCode });
    },
  };
}

/** `count` gzip members of 16 MiB of zeros each, concatenated: ~16 KB compressed per 16 MiB inflated. */
function gzipBomb(count: number): Buffer {
  return Buffer.concat(Array.from({ length: count }, () => BOMB_MEMBER));
}
const BOMB_MEMBER = gzipSync(Buffer.alloc(16 * 1024 * 1024));

/** Handlers recording every call, for the inflater's one-terminal-call rule. */
function recorder(): InflateHandlers & { calls: string[]; chunks: Buffer[]; done: Promise<void> } {
  let settle = (): void => {};
  const done = new Promise<void>((resolve) => (settle = resolve));
  const calls: string[] = [];
  const chunks: Buffer[] = [];
  return {
    calls,
    chunks,
    done,
    onData: (chunk) => {
      chunks.push(chunk);
      return true;
    },
    onEnd: (total) => {
      calls.push(`end ${total}`);
      settle();
    },
    onTooLarge: (what) => {
      calls.push(`too large ${what}`);
      settle();
    },
    onCorrupt: (message, code) => {
      calls.push(`corrupt ${code}: ${message}`);
      settle();
    },
  };
}

/** The inflater's zlib stream, if it started one: a white-box look, as nothing else tells whether zlib stopped. */
function zlibOf(inflater: Inflater): Duplex | undefined {
  return (inflater as unknown as { zlib?: Duplex }).zlib;
}

/** Resolves once the inflater's zlib stream has closed: no handler can be called after that. */
async function stopped(inflater: Inflater): Promise<void> {
  const zlib = zlibOf(inflater);
  if (zlib !== undefined && !zlib.closed) await once(zlib, "close");
}

describe("contentCodingOf", () => {
  it("takes no header, an empty one and identity as the body as is", () => {
    for (const header of [undefined, "", "identity", " Identity ", "identity, identity"])
      expect(contentCodingOf(header)).toEqual({ ok: true, coding: "identity" });
  });

  it("knows gzip, its x-gzip alias and deflate, in any case, around identity", () => {
    expect(contentCodingOf("gzip")).toEqual({ ok: true, coding: "gzip" });
    expect(contentCodingOf("GZIP")).toEqual({ ok: true, coding: "gzip" });
    expect(contentCodingOf(" x-gzip ")).toEqual({ ok: true, coding: "gzip" });
    expect(contentCodingOf("deflate")).toEqual({ ok: true, coding: "deflate" });
    expect(contentCodingOf("identity, gzip")).toEqual({ ok: true, coding: "gzip" });
  });

  it("refuses an unknown coding by name, and stacked codings", () => {
    expect(contentCodingOf("br")).toEqual({ ok: false, reason: "unsupported", message: expect.stringContaining('Content-Encoding "br" is not supported') });
    expect(contentCodingOf("gzip, deflate")).toEqual({ ok: false, reason: "unsupported", message: expect.stringContaining("stacks 2 codings") });
    expect(contentCodingOf("gzip, gzip")).toMatchObject({ ok: false, reason: "unsupported" });
  });

  it("quotes at most 40 characters of what it refuses", () => {
    const result = contentCodingOf("z".repeat(10_000));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message.length).toBeLessThan(200);
  });
});

describe("inflateBuffer", () => {
  it("inflates gzip (x-gzip, several members) and deflate (zlib-wrapped and raw)", async () => {
    expect(await inflateBuffer(gzipSync(body), "gzip", limits)).toEqual({ ok: true, body });
    expect(await inflateBuffer(Buffer.concat([gzipSync(body.subarray(0, 10)), gzipSync(body.subarray(10))]), "gzip", limits)).toEqual({ ok: true, body });
    expect(await inflateBuffer(deflateSync(body), "deflate", limits)).toEqual({ ok: true, body });
    expect(await inflateBuffer(deflateRawSync(body), "deflate", limits)).toEqual({ ok: true, body });
    expect(await inflateBuffer(body, "identity", limits)).toEqual({ ok: true, body });
  });

  it("takes exactly the limit inflated and refuses one byte more", async () => {
    const exact = Buffer.alloc(MAX_REQUEST_BYTES, "a");
    const result = await inflateBuffer(gzipSync(exact), "gzip", limits);
    expect(result.ok && result.body.equals(exact)).toBe(true);
    expect(await inflateBuffer(gzipSync(Buffer.alloc(MAX_REQUEST_BYTES + 1, "a")), "gzip", limits)).toEqual({
      ok: false,
      reason: "too_large",
      what: "inflated",
    });
    expect(await inflateBuffer(Buffer.alloc(MAX_REQUEST_BYTES + 1), "identity", limits)).toEqual({ ok: false, reason: "too_large", what: "inflated" });
  });

  it("takes compressed any body under the limit, even one that does not compress", async () => {
    const random = randomBytes(MAX_REQUEST_BYTES);
    const packed = gzipSync(random, { level: 9 });
    expect(packed.length).toBeGreaterThan(MAX_REQUEST_BYTES);
    expect(packed.length).toBeLessThanOrEqual(maxCompressedBytes(MAX_REQUEST_BYTES));
    const result = await inflateBuffer(packed, "gzip", limits);
    expect(result.ok && result.body.equals(random)).toBe(true);
  });

  it("refuses compressed bytes past their bound before inflating them all", async () => {
    const packed = gzipSync(randomBytes(4096));
    expect(await inflateBuffer(packed, "gzip", { maxBytes: 1_000_000, maxCompressedBytes: 1000 })).toEqual({
      ok: false,
      reason: "too_large",
      what: "compressed",
    });
  });

  it("names zlib's own reason for a corrupt stream", async () => {
    const notGzip = await inflateBuffer(body, "gzip", limits);
    expect(notGzip).toEqual({
      ok: false,
      reason: "corrupt",
      zlibCode: "Z_DATA_ERROR",
      message: "request body is not valid gzip data (Content-Encoding: gzip): incorrect header check",
    });
    const packed = gzipSync(body);
    expect(await inflateBuffer(packed.subarray(0, packed.length - 4), "gzip", limits)).toMatchObject({
      reason: "corrupt",
      zlibCode: "Z_BUF_ERROR",
      message: expect.stringMatching(/unexpected end of file$/),
    });
    const badCrc = Buffer.from(packed);
    badCrc[badCrc.length - 6] = (badCrc[badCrc.length - 6] as number) ^ 0xff;
    expect(await inflateBuffer(badCrc, "gzip", limits)).toMatchObject({ reason: "corrupt", message: expect.stringMatching(/incorrect data check$/) });
    expect(await inflateBuffer(Buffer.from("{}"), "deflate", limits)).toMatchObject({
      reason: "corrupt",
      message: expect.stringContaining("not valid deflate data"),
    });
    expect(await inflateBuffer(Buffer.alloc(0), "gzip", limits)).toMatchObject({
      reason: "corrupt",
      message: expect.stringMatching(/unexpected end of file$/),
    });
    expect(await inflateBuffer(Buffer.from([0x78]), "deflate", limits)).toMatchObject({
      reason: "corrupt",
      message: expect.stringMatching(/unexpected end of file$/),
    });
  });
});

describe("a compression bomb", () => {
  // What it costs the process (RSS) is measured where no other test's garbage lands, in serve's own
  // process: test/e2e/inflate-memory.test.ts. Here, what the inflater hands on and what it takes.
  it("stops at the limit: 480 KB that inflate to 480 MiB hand on one chunk past 500 KB at most, and zlib takes no more", async () => {
    const bomb = gzipBomb(30);
    expect(bomb.length).toBeLessThan(MAX_REQUEST_BYTES);
    let held = 0;
    const handlers = recorder();
    const inflater = createInflater("gzip", limits, {
      ...handlers,
      onData: (chunk, total) => {
        held = total;
        return handlers.onData(chunk, total);
      },
    });
    inflater.write(bomb);
    inflater.end();
    await handlers.done;
    expect(handlers.calls).toEqual(["too large inflated"]);
    expect(held).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
    expect(held).toBeGreaterThan(MAX_REQUEST_BYTES - 16 * 1024);
    // zlib was stopped as the limit passed, not left inflating the other 479 MiB.
    expect(zlibOf(inflater)?.destroyed).toBe(true);
    // What comes after is not taken (no zlib "write after end" either).
    expect(inflater.write(bomb)).toBe(true);
    expect(inflater.compressedBytes).toBe(bomb.length);
  });
});

describe("createInflater", () => {
  it("tells zlib from raw deflate even when the body arrives one byte at a time", async () => {
    for (const packed of [deflateSync(body), deflateRawSync(body)]) {
      const handlers = recorder();
      const inflater = createInflater("deflate", limits, handlers);
      for (const byte of packed) inflater.write(Buffer.from([byte]));
      inflater.end();
      await handlers.done;
      expect(handlers.calls).toEqual([`end ${body.length}`]);
      expect(Buffer.concat(handlers.chunks).equals(body)).toBe(true);
      expect(inflater.compressedBytes).toBe(packed.length);
    }
  });

  it("asks the source to wait when zlib is behind, and to resume when it has caught up", async () => {
    const large = Buffer.from(
      JSON.stringify({
        batch: Array.from({ length: 2000 }, (_, i) => ({ type: "track", userId: `u${i}`, event: "E", properties: { n: randomBytes(48).toString("hex") } })),
      }),
    );
    expect(large.length).toBeLessThan(MAX_REQUEST_BYTES);
    const packed = gzipSync(large);
    const handlers = recorder();
    let drained = (): void => {};
    const drain = new Promise<void>((resolve) => (drained = resolve));
    const inflater = createInflater("gzip", limits, { ...handlers, onDrain: () => drained() });
    expect(inflater.write(packed)).toBe(false);
    await drain;
    inflater.end();
    await handlers.done;
    expect(Buffer.concat(handlers.chunks).equals(large)).toBe(true);
  });

  it("stops when onData refuses a chunk, and after destroy, calling nothing more", async () => {
    const refused = recorder();
    const inflater = createInflater("gzip", limits, { ...refused, onData: () => false });
    inflater.write(gzipSync(Buffer.alloc(200_000, "x")));
    inflater.end();
    const destroyed = recorder();
    const other = createInflater("gzip", limits, destroyed);
    other.write(gzipSync(body));
    other.destroy();
    other.end();
    await Promise.all([stopped(inflater), stopped(other)]);
    expect(refused.calls).toEqual([]);
    expect(destroyed.calls).toEqual([]);
  });

  it("ignores bytes after end and a second end", async () => {
    const handlers = recorder();
    const inflater = createInflater("gzip", limits, handlers);
    inflater.write(gzipSync(body));
    inflater.end();
    inflater.write(Buffer.from("late"));
    inflater.end();
    await handlers.done;
    await stopped(inflater);
    expect(handlers.calls).toEqual([`end ${body.length}`]);
  });

  it("calls exactly one ending when the body is corrupt after good data", async () => {
    const handlers = recorder();
    const inflater = createInflater("gzip", limits, handlers);
    const packed = gzipSync(body);
    inflater.write(packed);
    inflater.write(Buffer.from("trailing junk"));
    inflater.end();
    await handlers.done;
    await stopped(inflater);
    expect(handlers.calls).toHaveLength(1);
    expect(handlers.calls[0]).toMatch(/^corrupt Z_DATA_ERROR: .*incorrect header check$/);
  });
});
