import { WebhookCliError } from "../errors.js";

/** A batch that was finally not delivered: every callback of its messages receives this. */
export class BatchDeliveryError extends WebhookCliError {
  constructor(
    message: string,
    /** Last HTTP status, or null when none arrived. */
    readonly status: number | null,
    readonly attempts: number,
    readonly messageIds: readonly string[],
  ) {
    super("E_DELIVERY", message);
  }
}

/** A call refused because the in-memory queue was full (the server is slower than the producer). */
export class QueueFullError extends WebhookCliError {
  constructor(message: string) {
    super("E_QUEUE_FULL", message);
  }
}
