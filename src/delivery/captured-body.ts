import { isUtf8 } from "node:buffer";
import { createHash, type Hash } from "node:crypto";

/**
 * A response's final answer as `replay --results/--compare` keep it: its
 * content-type and its body, whole when under 64 KiB, else SHA-256 and size
 * (docs/recording.md#forwarded-response, like a recording's `response`). The engine fills it only
 * when a call asks (`captureResponse`), so other deliveries pay nothing.
 */

/** A body at least this large is kept as its SHA-256 and size. */
export const MAX_KEPT_BODY_BYTES = 64 * 1024;

/** The response body as kept: the whole text, or its digest. */
export type KeptBody = { body: string } | { bodySha256: string; bodySize: number };

/** The final answer of one URL. */
export interface CapturedResponse {
  contentType: string | null;
  body: KeptBody;
}

/**
 * Reads a body as it streams in: keeps at most MAX_KEPT_BODY_BYTES and hashes
 * everything, so a huge answer costs constant memory.
 */
export class BodyCapture {
  private readonly hash: Hash = createHash("sha256");
  private kept: Buffer[] = [];
  private size = 0;

  push(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.size += chunk.byteLength;
    if (this.size < MAX_KEPT_BODY_BYTES) this.kept.push(Buffer.from(chunk));
    else this.kept = [];
  }

  finish(): KeptBody {
    const digest = this.hash.digest("hex");
    if (this.size < MAX_KEPT_BODY_BYTES) {
      const bytes = Buffer.concat(this.kept);
      if (isUtf8(bytes)) return { body: bytes.toString("utf8") };
    }
    return { bodySha256: digest, bodySize: this.size };
  }
}

/** The kept form of a body already in memory (the same rule as BodyCapture; hashed only when not kept whole). */
export function keepBody(body: Uint8Array | string): KeptBody {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (bytes.byteLength < MAX_KEPT_BODY_BYTES && isUtf8(bytes)) return { body: bytes.toString("utf8") };
  return { bodySha256: createHash("sha256").update(bytes).digest("hex"), bodySize: bytes.byteLength };
}

/** The content-type header's value from a header record (any case), or null. */
export function contentTypeOf(headers: Readonly<Record<string, string | readonly string[] | undefined>> | undefined): string | null {
  if (!headers) return null;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() !== "content-type") continue;
    const value = headers[name];
    return typeof value === "string" ? value : (value?.[0] ?? null);
  }
  return null;
}
