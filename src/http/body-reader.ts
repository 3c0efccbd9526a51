import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { BodyBudget } from "./limits.js";
import { createInflater, maxCompressedBytes, type ContentCoding } from "./inflate.js";

export interface BodyHandlers {
  /** The whole body arrived within the limits. */
  onBody(raw: Buffer): void;
  /** The body is over `maxBytes`: `size` is the declared length, or null when it went over while arriving. */
  onTooLarge(size: number | null): void;
  /** Buffering the body would exceed the receivers' shared budget. */
  onOverBudget(): void;
}

export interface EncodedBodyHandlers extends BodyHandlers {
  /** A compressed body zlib refused: `message` names the coding and zlib's reason. */
  onCorrupt(message: string): void;
}

/**
 * Reads a request body into memory, never past `maxBytes` and never past the
 * shared budget (whose bytes are given back when the request's socket
 * closes or its answer is done: `release`). Exactly one handler is called,
 * unless the sender aborts.
 */
export function readBody(req: IncomingMessage, maxBytes: number, budget: BodyBudget, handlers: BodyHandlers): { release(): void } {
  const read = new BodyRead(req, maxBytes, budget, handlers);
  read.start();
  return read;
}

const NO_CHUNKS: readonly Buffer[] = [];

/** One body being read; listen reads thousands a second, so this is one object and two listeners, not a closure per step. */
class BodyRead {
  private held = 0;
  private size = 0;
  private done = false;
  private chunks: readonly Buffer[] | Buffer[] = [];

  constructor(
    private readonly req: IncomingMessage,
    private readonly maxBytes: number,
    private readonly budget: BodyBudget,
    private readonly handlers: BodyHandlers,
  ) {}

  start(): void {
    const { req } = this;
    releaseWhenSocketCloses(req.socket, this);
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > this.maxBytes) return this.handlers.onTooLarge(Number(declared));
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
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.stop();
      return this.handlers.onTooLarge(null);
    }
    if (!this.budget.take(chunk.length, this.size)) {
      this.stop();
      return this.handlers.onOverBudget();
    }
    this.held += chunk.length;
    (this.chunks as Buffer[]).push(chunk);
  }

  private end(): void {
    if (this.done) return;
    this.done = true;
    const { chunks } = this;
    const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.size);
    this.chunks = NO_CHUNKS;
    this.handlers.onBody(raw);
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
  for (const read of this[HELD] ?? []) read.release();
}

/**
 * Reads a request body sent with `coding` (http/inflate.ts), inflating it as
 * it arrives: `maxBytes` and the budget apply to the inflated bytes, and
 * inflation stops as soon as either is passed, so a small compressed bomb
 * costs one zlib chunk. Exactly one handler is called, unless the sender aborts.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: the second body reader, to be folded into readBody (one reader with an optional inflater)
export function readEncodedBody(
  req: IncomingMessage,
  coding: ContentCoding,
  maxBytes: number,
  budget: BodyBudget,
  handlers: EncodedBodyHandlers,
): { release(): void } {
  if (coding === "identity") return readBody(req, maxBytes, budget, handlers);
  let held = 0;
  const release = (): void => {
    budget.give(held);
    held = 0;
    req.socket.off("close", release);
  };
  req.socket.once("close", release);
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxCompressedBytes(maxBytes)) {
    handlers.onTooLarge(null);
    return { release };
  }
  let chunks: Buffer[] = [];
  let done = false;
  const stop = (): void => {
    done = true;
    chunks = [];
    release();
  };
  const inflater = createInflater(
    coding,
    { maxBytes },
    {
      onData: (chunk, total) => {
        if (!budget.take(chunk.length, total)) {
          stop();
          handlers.onOverBudget();
          return false;
        }
        held += chunk.length;
        chunks.push(chunk);
        return true;
      },
      onEnd: (total) => {
        done = true;
        const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
        chunks = [];
        handlers.onBody(raw);
      },
      onTooLarge: () => {
        stop();
        handlers.onTooLarge(null);
      },
      onCorrupt: (message) => {
        stop();
        handlers.onCorrupt(message);
      },
      onDrain: () => req.resume(),
    },
  );
  req.on("data", (chunk: Buffer) => {
    if (!done && !inflater.write(chunk)) req.pause();
  });
  req.on("end", () => {
    if (!done) inflater.end();
  });
  // An aborted request is not a request: zlib is stopped, nothing is answered.
  req.on("error", () => {});
  req.once("close", () => {
    if (!done && !req.complete) {
      inflater.destroy();
      stop();
    }
  });
  return { release };
}
