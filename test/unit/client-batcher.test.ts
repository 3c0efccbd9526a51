import { describe, expect, it } from "vitest";
import { Batcher, MAX_BATCH_BYTES, batchBody, envelopeOverhead, type BatchItem } from "../../src/client/batcher.js";
import { parseRetryAfter } from "../../src/util/retry-after.js";
import { retryDelayMs, isRetryable, MAX_RETRY_AFTER_MS } from "../../src/client/retry.js";

const library = { name: "webhook-cli", version: "1.2.3" };

function message(bytes: number, id = "m"): BatchItem<undefined> {
  const json = JSON.stringify({ id, pad: "x".repeat(Math.max(0, bytes - 20 - id.length)) });
  return { json, bytes: Buffer.byteLength(json), messageId: id, callback: undefined };
}

describe("Batcher (pure)", () => {
  it("seals a batch when flushAt messages are queued", () => {
    const batcher = new Batcher<undefined>({ flushAt: 3, overheadBytes: 100 });
    expect(batcher.add(message(50))).toEqual([]);
    expect(batcher.add(message(50))).toEqual([]);
    const sealed = batcher.add(message(50));
    expect(sealed).toHaveLength(1);
    expect(sealed[0]!.messages).toHaveLength(3);
    expect(batcher.size).toBe(0);
  });

  it("flushAt 1 sends each message alone", () => {
    const batcher = new Batcher<undefined>({ flushAt: 1, overheadBytes: 100 });
    expect(batcher.add(message(50)).map((b) => b.messages.length)).toEqual([1]);
    expect(batcher.add(message(50)).map((b) => b.messages.length)).toEqual([1]);
  });

  it("seals the open batch before a message that would push the body over 500,000 bytes, never after", () => {
    expect(MAX_BATCH_BYTES).toBe(500_000);
    const overhead = envelopeOverhead(library);
    const batcher = new Batcher<undefined>({ flushAt: 1000, overheadBytes: overhead });
    const sizes: number[] = [];
    let total = 0;
    for (let i = 0; i < 40; i++) {
      for (const batch of batcher.add(message(30_000, `m${i}`))) {
        const body = batchBody(batch.messages, { library, messageId: crypto.randomUUID(), sentAt: new Date().toISOString() });
        const bytes = Buffer.byteLength(body);
        expect(bytes).toBe(overhead + batch.bytes);
        expect(bytes).toBeLessThanOrEqual(MAX_BATCH_BYTES);
        // One more message would not have fitted: the batch was as full as it could be.
        expect(bytes + 1 + 30_000).toBeGreaterThan(MAX_BATCH_BYTES);
        sizes.push(batch.messages.length);
        total += batch.messages.length;
      }
    }
    expect(sizes).toEqual([16, 16]);
    expect(total + batcher.size).toBe(40);
  });

  it("size and count can seal two batches on one add", () => {
    const batcher = new Batcher<undefined>({ flushAt: 2, overheadBytes: 0, maxBatchBytes: 100 });
    expect(batcher.add(message(60))).toEqual([]);
    const sealed = batcher.add(message(60));
    // The first does not fit beside the second, so it goes alone; the second alone is not yet flushAt.
    expect(sealed.map((b) => b.messages.length)).toEqual([1]);
    expect(batcher.seal()?.messages).toHaveLength(1);
    expect(batcher.seal()).toBeUndefined();
  });

  it("builds the exact body shape from the messages' JSON", () => {
    const m1 = message(40, "a");
    const m2 = message(40, "b");
    const body = batchBody([m1, m2], { library, messageId: "id-1", sentAt: "2024-01-01T00:00:00.000Z" });
    expect(JSON.parse(body)).toEqual({
      batch: [JSON.parse(m1.json), JSON.parse(m2.json)],
      context: { library },
      messageId: "id-1",
      sentAt: "2024-01-01T00:00:00.000Z",
    });
    expect(Object.keys(JSON.parse(body))).toEqual(["batch", "context", "messageId", "sentAt"]);
  });
});

describe("client retry policy (pure)", () => {
  it("retries network errors, timeouts, 5xx and 429, not other 4xx, 3xx or TLS", () => {
    expect(isRetryable({ kind: "status", status: 503, body: "" })).toBe(true);
    expect(isRetryable({ kind: "status", status: 500, body: "" })).toBe(true);
    expect(isRetryable({ kind: "status", status: 429, body: "" })).toBe(true);
    expect(isRetryable({ kind: "status", status: 400, body: "" })).toBe(false);
    expect(isRetryable({ kind: "status", status: 401, body: "" })).toBe(false);
    expect(isRetryable({ kind: "status", status: 302, body: "" })).toBe(false);
    expect(isRetryable({ kind: "network", code: "ECONNREFUSED", message: "" })).toBe(true);
    expect(isRetryable({ kind: "timeout" })).toBe(true);
    expect(isRetryable({ kind: "tls", code: "DEPTH_ZERO_SELF_SIGNED_CERT", message: "" })).toBe(false);
  });

  it("backs off exponentially with jitter in [half, full], capped", () => {
    expect(retryDelayMs(1, () => 0)).toBe(50);
    expect(retryDelayMs(1, () => 0.999999)).toBe(100);
    expect(retryDelayMs(3, () => 0)).toBe(200);
    expect(retryDelayMs(3, () => 0.999999)).toBe(400);
    expect(retryDelayMs(30, () => 0.999999)).toBe(10_000);
  });

  it("uses Retry-After (seconds or date) instead, capped", () => {
    expect(parseRetryAfter("2", 0)).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(retryDelayMs(1, () => 0, 2000)).toBe(2000);
    expect(retryDelayMs(1, () => 0, 10 * 3_600_000)).toBe(MAX_RETRY_AFTER_MS);
  });
});
