import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { BodyBudget } from "./limits.js";
import { createInflater, maxCompressedBytes, type ContentCoding, type InflateHandlers, type Inflater } from "./inflate.js";

export interface BodyHandlers {
  /** The whole body arrived within the limits (inflated, for a compressed one). */
  onBody(raw: Buffer): void;
  /** The body is over `maxBytes`: `size` is the declared length, or null when it went over while arriving (or is compressed). */
  onTooLarge(size: number | null): void;
  /** Buffering the body would exceed the receivers' shared budget. */
  onOverBudget(): void;
}

export interface EncodedBodyHandlers extends BodyHandlers {
  /** A compressed body zlib refused: `message` names the coding and zlib's reason. */
  onCorrupt(message: string): void;
}

/** A body being read: `release` gives its bytes back to the budget. */
export interface BodyReading {
  release(): void;
}

/**
 * Reads a request body into memory, never past `maxBytes` and never past the
 * shared budget (whose bytes are given back when the request's socket
 * closes or its answer is done: `release`). Exactly one handler is called,
 * unless the sender aborts. A body sent with a `coding` (http/inflate.ts) is
 * inflated as it arrives: `maxBytes` and the budget apply to the inflated
 * bytes, and inflation stops as soon as either is passed, so a small
 * compressed bomb costs one zlib chunk.
 */
export function readBody(req: IncomingMessage, maxBytes: number, budget: BodyBudget, handlers: BodyHandlers): BodyReading;
export function readBody(req: IncomingMessage, maxBytes: number, budget: BodyBudget, handlers: EncodedBodyHandlers, coding: ContentCoding): BodyReading;
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  budget: BodyBudget,
  handlers: BodyHandlers | EncodedBodyHandlers,
  coding: ContentCoding = "identity",
): BodyReading {
  const read = new BodyRead(req, maxBytes, budget, handlers);
  read.start(coding);
  return read;
}

const NO_CHUNKS: readonly Buffer[] = [];

/**
 * One body being read; listen reads thousands a second, so this is one object and two listeners, not a
 * closure per step. With an inflater, the request's bytes go to zlib and the inflated ones come back
 * here (this object is the inflater's handlers).
 */
class BodyRead implements BodyReading, InflateHandlers {
  private held = 0;
  private size = 0;
  private done = false;
  private chunks: readonly Buffer[] | Buffer[] = [];
  private inflater: Inflater | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly maxBytes: number,
    private readonly budget: BodyBudget,
    private readonly handlers: BodyHandlers | EncodedBodyHandlers,
  ) {}

  start(coding: ContentCoding): void {
    const { req } = this;
    releaseWhenSocketCloses(req.socket, this);
    const declared = req.headers["content-length"];
    if (declared !== undefined) {
      const compressed = coding !== "identity";
      if (Number(declared) > (compressed ? maxCompressedBytes(this.maxBytes) : this.maxBytes))
        return this.handlers.onTooLarge(compressed ? null : Number(declared));
    }
    if (coding !== "identity") this.inflater = createInflater(coding, { maxBytes: this.maxBytes }, this);
    req.on("data", (chunk: Buffer) => this.data(chunk));
    req.on("end", () => this.end());
    // An aborted request is not a request: nothing to judge or answer. (node:http emits `error` on a
    // request only when it has a listener, so none is added.)
  }

  release(): void {
    this.budget.give(this.held);
    this.held = 0;
    letGo(this.req.socket, this);
  }

  private data(chunk: Buffer): void {
    if (this.done) return;
    if (this.inflater !== undefined) {
      if (!this.inflater.write(chunk)) this.req.pause();
      return;
    }
    this.size += chunk.length;
    if (this.size > this.maxBytes) return this.onTooLarge();
    this.onData(chunk, this.size);
  }

  private end(): void {
    if (this.done) return;
    if (this.inflater !== undefined) this.inflater.end();
    else this.onEnd(this.size);
  }

  /** Bytes of the body (inflated, with an inflater), `total` so far: kept within the budget, or refused. */
  onData(chunk: Buffer, total: number): boolean {
    if (!this.budget.take(chunk.length, total)) {
      this.stop();
      this.handlers.onOverBudget();
      return false;
    }
    this.held += chunk.length;
    (this.chunks as Buffer[]).push(chunk);
    return true;
  }

  onEnd(total: number): void {
    this.done = true;
    const { chunks } = this;
    const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
    this.chunks = NO_CHUNKS;
    this.handlers.onBody(raw);
  }

  onTooLarge(): void {
    this.stop();
    this.handlers.onTooLarge(null);
  }

  onCorrupt(message: string): void {
    this.stop();
    (this.handlers as EncodedBodyHandlers).onCorrupt(message);
  }

  onDrain(): void {
    this.req.resume();
  }

  /** The socket closed: a body cut short stops inflating (one complete is still inflated and handled); its bytes go back. */
  closed(): void {
    if (!this.req.complete) this.inflater?.destroy();
    this.release();
  }

  private stop(): void {
    this.done = true;
    this.chunks = NO_CHUNKS;
    this.release();
  }
}

/*
 * The bodies each socket holds in the budget, given back when it closes: one listener per
 * connection rather than one added and removed per request (a keep-alive socket carries many).
 */
const HELD = Symbol("bodies held");
type Holding = Socket & { [HELD]?: Set<BodyRead> };

function releaseWhenSocketCloses(socket: Holding, read: BodyRead): void {
  let reads = socket[HELD];
  if (reads === undefined) {
    reads = socket[HELD] = new Set();
    socket.once("close", releaseAll);
  }
  reads.add(read);
}

function letGo(socket: Holding, read: BodyRead): void {
  socket[HELD]?.delete(read);
}

function releaseAll(this: Holding): void {
  for (const read of this[HELD] ?? []) read.closed();
}
