/**
 * Reads a stream (a file, standard input, an HTTP answer) into memory, never holding more than
 * `maxBytes`: past it the reading stops (the stream is destroyed) and undefined comes back, for
 * the caller to word the refusal. What a source streams, however long, costs at most the bound.
 */
export async function readAtMost(source: AsyncIterable<Uint8Array | string>, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early ends the iteration, which destroys a Node.js stream.
  for await (const chunk of source) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    size += bytes.length;
    if (size > maxBytes) return undefined;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, size);
}

/** `1048576` → `1 MiB`, `65536` → `64 KiB`; other sizes in bytes: for the wording of a bound. */
export function describeBound(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
