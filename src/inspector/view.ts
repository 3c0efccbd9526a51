import { isUtf8 } from "node:buffer";
import { formatRequestLine, redactHeaders } from "../receiver/record.js";
import { redactResponseHeaders } from "../util/redact.js";
import { curlCommand, type CurlTarget } from "./curl.js";
import type { Inspected, PeerResponse } from "./store.js";

/** What the list needs of a row (the page filters on these fields). */
export interface RowSummary {
  id: number;
  label: string;
  receivedAt: string;
  method: string;
  path: string;
  type: string | null;
  userId: string | null;
  name: string | null;
  signature: "ok" | "failed" | "unsigned";
  shape: "ok" | "warnings" | "errors";
  valid: boolean;
  status: number | null;
  fault: "timeout" | "drop" | null;
  injected: boolean;
  appStatus: number | null;
  appError: string | null;
  size: number;
  ms: number | null;
  resendOf: number | null;
  resendOfLabel: string | null;
  resendUrl: string | null;
}

export function summarize(row: Inspected): RowSummary {
  const v = row.verdict;
  return {
    id: row.id,
    label: row.label,
    receivedAt: row.receivedAt.toISOString(),
    method: row.method,
    path: row.path,
    type: v.type ?? null,
    userId: v.userId ?? null,
    name: v.name ?? null,
    signature: v.signatureValid === true ? "ok" : v.signatureValid === false ? "failed" : "unsigned",
    shape: v.shapeErrors.length > 0 ? "errors" : v.shapeWarnings.length > 0 ? "warnings" : "ok",
    valid: v.valid,
    status: row.status,
    fault: row.fault,
    injected: row.injected,
    appStatus: row.response?.status ?? null,
    appError: row.response?.error ?? null,
    size: v.size,
    ms: row.response?.ms ?? null,
    resendOf: row.resend?.of ?? null,
    resendOfLabel: row.resend?.ofLabel ?? null,
    resendUrl: row.resend?.url ?? null,
  };
}

/** One row in full for the detail pane: headers redacted as in recordings, the body pretty and raw. */
export function detail(row: Inspected, context: { secret: string | undefined; curl: CurlTarget }): Record<string, unknown> {
  const v = row.verdict;
  const curl = curlCommand(row, context.curl, context.secret);
  return {
    ...summarize(row),
    headers: redactHeaders(row.headers, context.secret),
    bodyPretty: v.body !== undefined ? JSON.stringify(v.body, null, 2) : null,
    bodyRaw: v.text ?? `(not UTF-8) base64: ${row.raw.toString("base64")}`,
    shapeErrors: v.shapeErrors,
    shapeWarnings: v.shapeWarnings,
    signatureError: v.signatureError,
    diagnosis: v.diagnosis?.message ?? null,
    response: row.response ? responseView(row.response) : null,
    // null, with the reason in curlProblem, when the request cannot be copied as a command.
    curl: curl.command,
    curlProblem: curl.problem,
  };
}

function responseView(response: PeerResponse): Record<string, unknown> {
  const headers = redactResponseHeaders(response.headers);
  return {
    status: response.status,
    ms: response.ms,
    error: response.error,
    headers,
    body: isUtf8(response.body) ? response.body.toString("utf8") : `(not UTF-8) base64: ${response.body.toString("base64")}`,
  };
}

/** A recording line (docs/recording.md#recording-line) that `replay` sends byte-identical. */
export function recordLine(row: Inspected, secret: string | undefined): string {
  return formatRequestLine(row, secret);
}
