import type { IncomingMessage } from "node:http";
import type { BodyBudget } from "./http-limits.js";

export interface BodyHandlers {
  /** The whole body arrived within the limits. */
  onBody(raw: Buffer): void;
  /** The body is over `maxBytes`: `size` is the declared length, or null when it went over while arriving. */
  onTooLarge(size: number | null): void;
  /** Buffering the body would exceed the receivers' shared budget. */
  onOverBudget(): void;
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
