import type { IncomingMessage } from "node:http";
import type { BodyBudget } from "./http-limits.js";
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
  let held = 0;
  const release = (): void => {
    budget.give(held);
    held = 0;
    // A keep-alive socket carries many requests: one listener per request would pile up.
    req.socket.off("close", release);
  };
  req.socket.once("close", release);
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) {
    handlers.onTooLarge(Number(declared));
    return { release };
  }
  let chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const stop = (): void => {
    done = true;
    chunks = [];
    release();
  };
  req.on("data", (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > maxBytes) {
      stop();
      handlers.onTooLarge(null);
      return;
    }
    if (!budget.take(chunk.length, size)) {
      stop();
      handlers.onOverBudget();
      return;
    }
    held += chunk.length;
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (done) return;
    done = true;
    const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    chunks = [];
    handlers.onBody(raw);
  });
  // An aborted request is not a request: nothing to judge or answer.
  req.on("error", () => {});
  return { release };
}

/**
 * Reads a request body sent with `coding` (util/inflate.ts), inflating it as
 * it arrives: `maxBytes` and the budget apply to the inflated bytes, and
 * inflation stops as soon as either is passed, so a small compressed bomb
 * costs one zlib chunk. Exactly one handler is called, unless the sender aborts.
 */
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
