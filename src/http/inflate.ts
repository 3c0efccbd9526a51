import { createGunzip, createInflate, createInflateRaw, type Gunzip, type Inflate, type InflateRaw } from "node:zlib";

/**
 * Bounded decoding of a request body by its `Content-Encoding`. The size
 * limit applies to the inflated bytes, and inflation stops as soon as they
 * pass it: a few kilobytes that would inflate to gigabytes cost one zlib
 * chunk past the limit, never more. Compressed bytes are fed to zlib as they
 * arrive (a chunked upload with no Content-Length works the same as a
 * buffer), and are bounded too.
 */

/** The codings decoded: the body as is, gzip (`gzip`, `x-gzip`), deflate (`deflate`: zlib-wrapped or raw). */
export type ContentCoding = "identity" | "gzip" | "deflate";

export type CodingResult = { ok: true; coding: ContentCoding } | { ok: false; reason: "unsupported"; message: string };

const CODINGS: ReadonlyMap<string, ContentCoding> = new Map([
  ["identity", "identity"],
  ["gzip", "gzip"],
  ["x-gzip", "gzip"],
  ["deflate", "deflate"],
]);

/** How much of an unknown coding a refusal quotes back. */
const QUOTED_CODING_CHARS = 40;

/**
 * The coding of a `Content-Encoding` header (case-insensitive, `identity`
 * entries ignored, absent or empty = identity), or a refusal (answered 415)
 * for an unknown coding or more than one coding stacked.
 */
export function contentCodingOf(header: string | undefined): CodingResult {
  if (header === undefined) return { ok: true, coding: "identity" };
  // node:http joins repeated Content-Encoding headers with ", ".
  const named = header
    .split(",")
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== "" && part !== "identity");
  if (named.length === 0) return { ok: true, coding: "identity" };
  const first = named[0] as string;
  const coding = CODINGS.get(first);
  if (named.length > 1) {
    return unsupported(`Content-Encoding ${quote(header.trim())} stacks ${named.length} codings: send the body as is or compressed once, with gzip or deflate`);
  }
  if (coding === undefined) return unsupported(`Content-Encoding ${quote(first)} is not supported: send the body as is or compressed with gzip or deflate`);
  return { ok: true, coding };
}

function unsupported(message: string): CodingResult {
  return { ok: false, reason: "unsupported", message };
}

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTED_CODING_CHARS ? `${text.slice(0, QUOTED_CODING_CHARS)}…` : text);
}

/**
 * The most compressed bytes taken for a body of at most `maxBytes` inflated:
 * zlib's own bound on deflate output for incompressible input (deflateBound),
 * the gzip wrapper, and room for a file name or comment in a gzip header. So
 * any body under the limit is taken compressed as well, and a stream that
 * only grows past this (junk, or a body too large anyway) is cut off.
 */
export function maxCompressedBytes(maxBytes: number): number {
  return maxBytes + Math.floor(maxBytes / 4096) + Math.floor(maxBytes / 16384) + Math.floor(maxBytes / 33_554_432) + 13 + 18 + GZIP_HEADER_ROOM_BYTES;
}

const GZIP_HEADER_ROOM_BYTES = 1024;

export interface InflateLimits {
  /** The most inflated bytes (the request limit); one byte more stops inflation. */
  maxBytes: number;
  /** The most compressed bytes (default `maxCompressedBytes(maxBytes)`). */
  maxCompressedBytes?: number;
}

export interface InflateHandlers {
  /**
   * Inflated bytes in order, `total` inflated so far (never over the limit).
   * Return false to stop (the caller's memory budget refused the chunk):
   * nothing else is called then.
   */
  onData(chunk: Buffer, total: number): boolean;
  /** The compressed stream ended cleanly; `total` bytes inflated in all. */
  onEnd(total: number): void;
  /** Inflated bytes passed `maxBytes` (`"inflated"`), or compressed bytes passed their bound (`"compressed"`). */
  onTooLarge(what: "inflated" | "compressed"): void;
  /** zlib refused the stream: `message` names the coding and quotes zlib's reason ("incorrect header check"…). */
  onCorrupt(message: string, zlibCode: string | undefined): void;
  /** zlib's input queue has room again after `write` returned false: resume the source. */
  onDrain?(): void;
}

export interface Inflater {
  /** Feeds compressed bytes; false when zlib's input queue is full (pause the source until `onDrain`). */
  write(chunk: Buffer): boolean;
  /** The compressed body is complete. */
  end(): void;
  /** Stops at once (the sender aborted); no handler is called after this. */
  destroy(): void;
  /** Compressed bytes taken so far. */
  readonly compressedBytes: number;
}

/**
 * An inflater for one body. Exactly one of `onEnd`, `onTooLarge` and
 * `onCorrupt` is called, unless `onData` returned false or `destroy` came
 * first. What it holds: the inflated bytes passed to `onData` (the caller's,
 * at most `maxBytes`), one zlib output chunk (16 KB), and the compressed bytes
 * zlib has not consumed yet (bounded by backpressure: see `write`).
 */
export function createInflater(coding: "gzip" | "deflate", limits: InflateLimits, handlers: InflateHandlers): Inflater {
  return new BodyInflater(coding, limits, handlers);
}

class BodyInflater implements Inflater {
  private readonly maxCompressed: number;
  private zlib: Gunzip | Inflate | InflateRaw | undefined;
  // deflate: the first byte(s), held until two tell a zlib header from raw deflate.
  private head: Buffer | undefined;
  private compressed = 0;
  private inflated = 0;
  private finished = false;
  // Bytes written after end() would be zlib's "write after end", not the sender's fault: ignored.
  private ended = false;

  constructor(
    private readonly coding: "gzip" | "deflate",
    private readonly limits: InflateLimits,
    private readonly handlers: InflateHandlers,
  ) {
    this.maxCompressed = limits.maxCompressedBytes ?? maxCompressedBytes(limits.maxBytes);
  }

  get compressedBytes(): number {
    return this.compressed;
  }

  write(chunk: Buffer): boolean {
    if (this.finished || this.ended || chunk.length === 0) return true;
    this.compressed += chunk.length;
    if (this.compressed > this.maxCompressed) {
      this.finish();
      this.handlers.onTooLarge("compressed");
      return true;
    }
    if (this.zlib !== undefined) return this.zlib.write(chunk);
    const seen = this.head === undefined ? chunk : Buffer.concat([this.head, chunk]);
    if (this.coding === "deflate" && seen.length < 2) {
      this.head = seen;
      return true;
    }
    this.head = undefined;
    this.zlib = this.start(seen);
    return this.zlib.write(seen);
  }

  end(): void {
    if (this.finished || this.ended) return;
    this.ended = true;
    // A deflate body of one byte (or none) ends before its kind is known: zlib says what is wrong with it.
    const rest = this.head;
    this.head = undefined;
    this.zlib ??= this.start(rest ?? Buffer.alloc(0));
    this.zlib.end(rest);
  }

  destroy(): void {
    if (!this.finished) this.finish();
  }

  private finish(): void {
    this.finished = true;
    this.head = undefined;
    this.zlib?.destroy();
  }

  private start(first: Buffer): Gunzip | Inflate | InflateRaw {
    const { coding, handlers } = this;
    const stream = coding === "gzip" ? createGunzip() : looksLikeZlib(first) ? createInflate() : createInflateRaw();
    stream.on("data", (chunk: Buffer) => this.data(chunk));
    stream.on("end", () => {
      if (this.finished) return;
      this.finished = true;
      handlers.onEnd(this.inflated);
    });
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (this.finished) return;
      this.finish();
      handlers.onCorrupt(`request body is not valid ${coding} data (Content-Encoding: ${coding}): ${error.message}`, error.code);
    });
    stream.on("drain", () => {
      if (!this.finished) handlers.onDrain?.();
    });
    return stream;
  }

  private data(chunk: Buffer): void {
    if (this.finished) return;
    if (this.inflated + chunk.length > this.limits.maxBytes) {
      this.finish();
      this.handlers.onTooLarge("inflated");
      return;
    }
    this.inflated += chunk.length;
    if (!this.handlers.onData(chunk, this.inflated)) this.finish();
  }
}

/**
 * Whether a deflate body starts with a zlib header (RFC 1950: method 8, a
 * window of at most 32 KB, a check making the first two bytes a multiple of
 * 31). HTTP's `deflate` is zlib-wrapped, but some senders send raw deflate
 * (RFC 1951), which browsers and curl accept too; a raw stream passes this
 * check only if it opens with a non-final stored block whose padding bits
 * happen to fit, which compressors do not write.
 */
function looksLikeZlib(first: Buffer): boolean {
  if (first.length < 2) return true;
  const cmf = first[0] as number;
  const flg = first[1] as number;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}
