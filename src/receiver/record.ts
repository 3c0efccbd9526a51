import { closeSync, openSync, writeSync } from "node:fs";
import { UsageError } from "../errors.js";
import type { RequestHeaders } from "./verdict.js";

export const REDACTED = "[redacted]";
// Credentials a sender may pass along; their values never reach a recording.
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

export interface RecordInput {
  receivedAt: Date;
  method: string;
  path: string;
  headers: RequestHeaders;
  signatureValid: boolean | null;
  raw: Uint8Array;
  /** The raw body decoded as UTF-8, or null when it is not valid UTF-8. */
  text: string | null;
  /** The parsed body; undefined when the body is not JSON. */
  body: unknown;
  /** Any header value holding the secret is redacted too. */
  secret?: string | undefined;
  /** listen --forward-to: the app's answer (CONTRACT.md 4). */
  response?: Record<string, unknown>;
}

/**
 * One recording line (CONTRACT.md 4), newline included. `rawBody` (base64)
 * is added when the bytes differ from JSON.stringify(body), so a replay can
 * send exactly what arrived.
 */
export function formatRecordLine(input: RecordInput): string {
  const bodyJson = input.body === undefined ? "null" : JSON.stringify(input.body);
  // Valid UTF-8 decodes one-to-one, so comparing strings compares the bytes.
  const identical = input.text !== null && input.text === bodyJson;
  let line =
    `{"receivedAt":${isoString(input.receivedAt)},"method":${JSON.stringify(input.method)},` +
    `"path":${JSON.stringify(input.path)},"headers":${JSON.stringify(redactHeaders(input.headers, input.secret))},` +
    `"signatureValid":${String(input.signatureValid)},"body":${bodyJson}`;
  if (!identical) line += `,"rawBody":"${Buffer.from(input.raw.buffer, input.raw.byteOffset, input.raw.byteLength).toString("base64")}"`;
  if (input.response !== undefined) line += `,"response":${JSON.stringify(input.response)}`;
  return `${line}}\n`;
}

// Requests arriving in the same millisecond share one formatted timestamp.
let lastTime = NaN;
let lastIso = "";

/** JSON.stringify(date.toISOString()), cached for the last millisecond seen (an invalid date still throws). */
function isoString(date: Date): string {
  const time = date.getTime();
  if (time !== lastTime) {
    lastIso = JSON.stringify(date.toISOString());
    lastTime = time;
  }
  return lastIso;
}

export function redactHeaders(headers: RequestHeaders, secret?: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const holdsSecret = secret !== undefined && secret !== "" && (Array.isArray(value) ? value.some((v) => v.includes(secret)) : value.includes(secret));
    out[name] = CREDENTIAL_HEADERS.has(name.toLowerCase()) || holdsSecret ? REDACTED : value;
  }
  return out;
}

/** An append-only recording file: each line goes out with one write(2) (no fsync), before the answer. */
export class RecordingFile {
  private fd: number | undefined;

  private constructor(fd: number, readonly path: string) {
    this.fd = fd;
  }

  static open(path: string): RecordingFile {
    try {
      return new RecordingFile(openSync(path, "a"), path);
    } catch (error) {
      throw new UsageError(`cannot open for appending: ${(error as Error).message}`, { field: "record", file: path });
    }
  }

  append(line: string): void {
    if (this.fd === undefined) return;
    const written = writeSync(this.fd, line);
    // A short write (disk nearly full) leaves the rest to a byte-exact loop.
    const length = Buffer.byteLength(line);
    if (written === length) return;
    const bytes = Buffer.from(line, "utf8");
    for (let done = written; done < length; ) done += writeSync(this.fd, bytes, done);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
