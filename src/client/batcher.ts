/**
 * Pure batching (no I/O, no timers): messages arrive as JSON text and leave in
 * sealed batches, by count (`flushAt`) or because the next message would push
 * the request body over 500,000 bytes (MAX_BATCH_BYTES). The caller decides when time is up (`seal`).
 */

import { MAX_BATCH_BYTES } from "../messages/limits.js";

export { MAX_BATCH_BYTES };

export interface BatchItem<C> {
  /** The message's JSON text, exactly as it is sent. */
  json: string;
  /** UTF-8 length of `json`. */
  bytes: number;
  messageId: string;
  callback: C | undefined;
}

export interface SealedBatch<C> {
  messages: BatchItem<C>[];
  /** Bytes of the messages plus the commas between them (the body's `batch` array contents). */
  bytes: number;
}

export interface BatcherOptions {
  flushAt: number;
  /** Bytes of the request body around the messages (`{"batch":[`, the context, messageId, sentAt). */
  overheadBytes: number;
  maxBatchBytes?: number;
}

export class Batcher<C> {
  private current: BatchItem<C>[] = [];
  private currentBytes = 0;
  private readonly flushAt: number;
  private readonly budget: number;

  constructor(options: BatcherOptions) {
    this.flushAt = options.flushAt;
    this.budget = (options.maxBatchBytes ?? MAX_BATCH_BYTES) - options.overheadBytes;
  }

  /** Messages waiting in the open batch. */
  get size(): number {
    return this.current.length;
  }

  /**
   * Adds a message and returns the batches it sealed, in send order: the open
   * batch when this message would not fit beside it, then the new one when it
   * reaches `flushAt`.
   */
  add(message: BatchItem<C>): SealedBatch<C>[] {
    const sealed: SealedBatch<C>[] = [];
    if (this.current.length > 0 && this.currentBytes + 1 + message.bytes > this.budget) {
      sealed.push(this.take());
    }
    this.currentBytes += (this.current.length > 0 ? 1 : 0) + message.bytes;
    this.current.push(message);
    if (this.current.length >= this.flushAt) sealed.push(this.take());
    return sealed;
  }

  /** Seals the open batch (interval or explicit flush); undefined when it is empty. */
  seal(): SealedBatch<C> | undefined {
    return this.current.length > 0 ? this.take() : undefined;
  }

  private take(): SealedBatch<C> {
    const batch = { messages: this.current, bytes: this.currentBytes };
    this.current = [];
    this.currentBytes = 0;
    return batch;
  }
}

export interface BatchEnvelope {
  library: { name: string; version: string };
  messageId: string;
  sentAt: string;
}

/** The request body (docs/serve-api.md#client-request), assembled from the messages' JSON without re-serializing them. */
export function batchBody(messages: readonly BatchItem<unknown>[], envelope: BatchEnvelope): string {
  let batch = "";
  for (let i = 0; i < messages.length; i++) batch += (i > 0 ? "," : "") + messages[i]!.json;
  return (
    `{"batch":[${batch}],"context":${JSON.stringify({ library: envelope.library })}` +
    `,"messageId":${JSON.stringify(envelope.messageId)},"sentAt":${JSON.stringify(envelope.sentAt)}}`
  );
}

/** Bytes of a body around its messages, for a UUID messageId and an ISO sentAt. */
export function envelopeOverhead(library: BatchEnvelope["library"]): number {
  const empty = batchBody([], { library, messageId: "00000000-0000-0000-0000-000000000000", sentAt: new Date(0).toISOString() });
  return Buffer.byteLength(empty, "utf8");
}
