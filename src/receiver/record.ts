import { writeSync } from "node:fs";
import { AppendFile, type WriteFunction } from "../util/append-file.js";
import { redactHeaders, redactUrl, type Secrets } from "../safe-text/redact.js";
import type { RequestHeaders, RequestVerdict } from "./verdict.js";

export { REDACTED, redactHeaders } from "../safe-text/redact.js";

export interface RecordInput {
  receivedAt: Date;
  method: string;
  path: string;
  headers: RequestHeaders;
  signatureValid: boolean | null;
  /** Written for a batch only (docs/recording.md#recording-line): which bytes X-Signature matched. */
  signatureRule?: RequestVerdict["signatureRule"] | undefined;
  /** The scheme checked and, when it failed, why (docs/recording.md#recording-line); written when a scheme was checked. */
  signatureScheme?: RequestVerdict["signatureScheme"] | undefined;
  signatureReason?: RequestVerdict["signatureReason"] | undefined;
  raw: Uint8Array;
  /** The raw body decoded as UTF-8, or null when it is not valid UTF-8. */
  text: string | null;
  /** The parsed body; undefined when the body is not JSON. */
  body: unknown;
  /** Any header value holding a secret is redacted too. */
  secret?: Secrets;
  /** listen --forward-to: the app's answer (docs/recording.md#forwarded-response). */
  response?: Record<string, unknown> | undefined;
}

/** A received request's recording line (listen --record, the inspector's Download), its verdict giving the signature result and the body. */
export function formatRequestLine(
  request: {
    receivedAt: Date;
    method: string;
    path: string;
    headers: RequestHeaders;
    raw: Uint8Array;
    verdict: Pick<RequestVerdict, "signatureValid" | "text" | "body"> & Partial<Pick<RequestVerdict, "signatureRule" | "signatureScheme" | "signatureReason">>;
  },
  secret: Secrets,
  response?: Record<string, unknown>,
): string {
  const { verdict } = request;
  return formatRecordLine({
    receivedAt: request.receivedAt,
    method: request.method,
    path: request.path,
    headers: request.headers,
    signatureValid: verdict.signatureValid,
    signatureRule: verdict.signatureRule,
    signatureScheme: verdict.signatureScheme,
    signatureReason: verdict.signatureReason,
    raw: request.raw,
    text: verdict.text,
    body: verdict.body,
    secret,
    response,
  });
}

/**
 * One recording line (docs/recording.md#recording-line), newline included. `rawBody` (base64)
 * is added when the bytes differ from JSON.stringify(body), so a replay can
 * send exactly what arrived.
 */
export function formatRecordLine(input: RecordInput): string {
  const bodyJson = input.body === undefined ? "null" : JSON.stringify(input.body);
  // Valid UTF-8 decodes one-to-one, so comparing strings compares the bytes.
  const identical = input.text !== null && input.text === bodyJson;
  let line =
    `{"receivedAt":${isoString(input.receivedAt)},"method":${JSON.stringify(input.method)},` +
    `"path":${JSON.stringify(redactUrl(input.path, input.secret))},"headers":${JSON.stringify(redactHeaders(input.headers, input.secret))},` +
    `"signatureValid":${String(input.signatureValid)},`;
  // A batch may be signed over element 0 or the whole body; a replay signs it the same way.
  if (input.signatureScheme != null) line += `"signatureScheme":"${input.signatureScheme}",`;
  if (input.signatureReason != null) line += `"signatureReason":"${input.signatureReason}",`;
  if (input.signatureRule != null && Array.isArray(input.body)) line += `"signatureRule":"${input.signatureRule}",`;
  line += `"body":${bodyJson}`;
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

/**
 * The line for a request that could not be judged (an internal error): no
 * verdict, no parsed body, but the exact bytes, so nothing received is lost.
 */
export function formatUnjudgedLine(input: Omit<RecordInput, "signatureValid" | "text" | "body">): string {
  return formatRecordLine({ ...input, signatureValid: null, text: null, body: undefined });
}

/** An append-only recording file: each line goes out with one write(2) (no fsync), before the answer. */
export class RecordingFile extends AppendFile {
  /** `write` is injectable so tests can fail part way (a disk filling up). */
  static open(path: string, write: WriteFunction = writeSync): RecordingFile {
    return new RecordingFile(path, "record", write);
  }
}
