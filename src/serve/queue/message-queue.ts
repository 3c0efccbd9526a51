import type { Failure } from "../../delivery/failure.js";

/**
 * The queue of accepted messages between ingest and delivery. `enqueue`
 * returns only once the messages would survive a crash of the process, so the
 * 2xx can follow it. Rows leave `pending` when delivered, or move to `failed`
 * when given up. Deliveries are acknowledged in batches (one transaction per
 * tick): a crash can lose at most the acks of that tick, whose messages are
 * then resent (at least once).
 */

export interface NewMessage {
  /** The outgoing JSON body, exactly as it will be signed and sent. */
  body: string;
  source: string;
}

/** A user a source has sent calls about (for deletion requests). */
export interface SeenUser {
  source: string;
  userId: string;
}

export interface QueuedMessage {
  id: number;
  body: string;
  /** Epoch ms of the first delivery attempt, when one was recorded (before a restart). */
  firstAttemptAt: number | undefined;
}

export type { Failure };

export interface FailedMessage {
  id: number;
  body: string;
  failedAt: number;
  failure: Failure;
}

export interface MessageQueue {
  /** Stores the messages of one request, and the users it mentions, in one transaction. */
  enqueue(messages: readonly NewMessage[], seen?: readonly SeenUser[]): void;
  /** Up to `limit` pending messages not handed out before by this queue object, oldest first. */
  claim(limit: number): QueuedMessage[];
  /** Records when delivery of each message started, so the retry window survives a restart. */
  recordFirstAttempts(starts: ReadonlyMap<number, number>): void;
  delivered(id: number): void;
  failed(id: number, failure: Failure): void;
  /** Messages stored and not yet delivered or given up. */
  pendingCount(): number;
  failedCount(): number;
  listFailed(limit?: number): FailedMessage[];
  /** Sources that have sent a message about `userId` (docs/serve-api.md#deletions). */
  sourcesThatSaw(userId: string): string[];
  /** Writes batched acknowledgements now. */
  flush(): void;
  close(): void;
}
