/** Size limits of the real Tracking API (docs/serve-api.md#limits, docs/serve-api.md#client-batching), shared by serve and the client. */

/** One message's JSON at most 32 KB. */
export const MAX_MESSAGE_BYTES = 32_768;
/** One request body at most 500 KB: what serve accepts, as the real API does. */
export const MAX_REQUEST_BYTES = 512_000;
/**
 * What the client puts in one batch body: 500 KB read as 500,000 bytes, as
 * analytics-go does, so every batch it sends is accepted by the real API too.
 */
export const MAX_BATCH_BYTES = 500_000;
/** One batch at most 2,500 calls: the real API answers 200 and drops the rest. */
export const MAX_BATCH_CALLS = 2_500;
