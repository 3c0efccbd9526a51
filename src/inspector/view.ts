import { isUtf8 } from "node:buffer";
import { formatRequestLine, redactHeaders } from "../receiver/record.js";
import { userIdOf } from "../messages/check.js";
import { readJsonBody } from "../receiver/verdict.js";
import { isPlainObject } from "../json/parse.js";
import { MAX_PRETTY_CHARS, prettyJson } from "../json/pretty.js";
import { redactResponseHeaders, type Secrets } from "../safe-text/redact.js";
import { bodyLabel } from "../receiver/body-label.js";
import { SCHEMES } from "../signing/schemes.js";
import { curlCommand, type CurlTarget } from "./curl.js";
import { elementViews, MAX_LISTED_ELEMENTS } from "./elements.js";
import type { Inspected, KeptResponse } from "../receiver/history/index.js";

/** What the list needs of a row (the page filters on these fields). */
export interface RowSummary {
  id: number;
  label: string;
  receivedAt: string;
  /** POST, PUT or PATCH (another for a request refused with 405). */
  method: string;
  path: string;
  type: string | null;
  /** What the body is: message, batch, payload (not a message), none (no data), invalid. */
  kind: string;
  /** What the Type column shows: the message type, `batch of 3`, `payload`, `no data`; null when none applies. */
  kindLabel: string | null;
  /** The bytes X-Signature matched: the whole `body`, or a batch's `first-element`; null when not verified. */
  signatureRule: "body" | "first-element" | null;
  userId: string | null;
  name: string | null;
  signature: "ok" | "failed" | "unsigned";
  /** The signature scheme checked (docs/schemes.md): the one verified or the one that failed; null when none was. */
  scheme: string | null;
  shape: "ok" | "warnings" | "errors";
  valid: boolean;
  status: number | null;
  fault: "timeout" | "drop" | null;
  injected: boolean;
  /** The index of the --responses rule that answered, or null. */
  rule: number | null;
  appStatus: number | null;
  appError: string | null;
  size: number;
  ms: number | null;
  resendOf: number | null;
  resendOfLabel: string | null;
  resendUrl: string | null;
  /** A resend whose body was edited before it went (edit-then-resend). */
  resendEdited: boolean;
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
    kind: v.bodyKind,
    kindLabel: bodyLabel(v) ?? null,
    signatureRule: v.signatureRule,
    userId: v.userId ?? null,
    name: v.name ?? null,
    signature: v.signatureValid === true ? "ok" : v.signatureValid === false ? "failed" : "unsigned",
    scheme: v.signatureScheme,
    shape: v.shapeErrors.length > 0 ? "errors" : v.shapeWarnings.length > 0 ? "warnings" : "ok",
    valid: v.valid,
    status: row.status,
    fault: row.fault,
    injected: row.injected,
    rule: row.rule ?? null,
    appStatus: row.response?.status ?? null,
    appError: row.response?.error ?? null,
    size: v.size,
    ms: row.response?.ms ?? null,
    resendOf: row.resend?.of ?? null,
    resendOfLabel: row.resend?.ofLabel ?? null,
    resendUrl: row.resend?.url ?? null,
    resendEdited: row.resend?.edited === true,
  };
}

/**
 * One row in full for the detail pane: headers redacted as in recordings, the
 * body raw and, when its pretty form is not too large, pretty. The body is
 * read again from the row's bytes: rows keep no parsed copy.
 */
export function detail(
  row: Inspected,
  context: { secret: Secrets; curl: CurlTarget | { problem: string }; forwardTarget?: string | null; strict?: boolean },
): Record<string, unknown> {
  const v = row.verdict;
  const curl = "problem" in context.curl ? { command: null, problem: context.curl.problem } : curlCommand(row, context.curl, context.secret);
  const { text, body } = readJsonBody(row.raw);
  const pretty = body !== undefined ? prettyJson(body) : null;
  // The row keeps its texts cut for the list; the detail reads them whole from the body.
  const message = v.bodyKind === "message" && isPlainObject(body) ? body : undefined;
  const batch = elementViews(body, context.strict ?? false, v.signatureRule);
  const event = message?.["event"];
  const name = typeof event === "string" ? event : message?.["name"];
  return {
    ...summarize(row),
    ...(message ? { userId: userIdOf(message) ?? null, name: typeof name === "string" ? name : null } : {}),
    headers: redactHeaders(row.headers, context.secret),
    bodyPretty: pretty,
    bodyNote:
      body !== undefined && pretty === null
        ? `not pretty-printed: its pretty form would be over ${MAX_PRETTY_CHARS / (1024 * 1024)} MB (deep nesting adds indentation to every line); shown raw`
        : null,
    bodyRaw: text ?? `(not UTF-8) base64: ${row.raw.toString("base64")}`,
    shapeErrors: withMore(v.shapeErrors, v.moreShapeErrors, "errors"),
    shapeWarnings: withMore(v.shapeWarnings, v.moreShapeWarnings, "warnings"),
    signatureError: v.signatureError,
    signatureNote: v.signatureNote,
    signatureReason: v.signatureReason,
    signatureSecret: v.signatureSecret,
    skewSeconds: v.skewSeconds,
    // The header the scheme's signature travels in, for the sentence the page shows.
    signatureHeader: v.signatureScheme === null ? null : SCHEMES[v.signatureScheme].signature.name,
    batch: v.batch,
    // Each element of a batch with its shape result; the first MAX_LISTED_ELEMENTS, the rest counted.
    elements: batch?.elements ?? null,
    elementsNote: batch && batch.more > 0 ? `… and ${batch.more} more elements (the first ${MAX_LISTED_ELEMENTS} are listed)` : null,
    diagnosis: v.diagnosis?.message ?? null,
    response: row.response ? responseView(row.response) : null,
    // Where this request was relayed (its route), the default of Resend; null when listen answered it.
    forwardTarget: context.forwardTarget ?? null,
    // null, with the reason in curlProblem, when the request cannot be copied as a command.
    curl: curl.command,
    curlProblem: curl.problem,
  };
}

/** The kept issues, then one line counting the rest. */
function withMore(issues: readonly { key: string; message: string }[], more: number, kind: string): { key: string; message: string }[] {
  return more > 0 ? [...issues, { key: "(more)", message: `… and ${more} more ${kind} (the first ${issues.length} are kept)` }] : [...issues];
}

function responseView(response: KeptResponse): Record<string, unknown> {
  const headers = redactResponseHeaders(response.headers);
  const view: Record<string, unknown> = { status: response.status, ms: response.ms, error: response.error, headers, bodySize: response.bodySize };
  if (response.body === null) return { ...view, body: null, bodyPretty: null, bodySha256: response.bodySha256 };
  if (!isUtf8(response.body)) return { ...view, body: `(not UTF-8) base64: ${response.body.toString("base64")}`, bodyPretty: null };
  const { text, body } = readJsonBody(response.body);
  return { ...view, body: text, bodyPretty: body !== undefined ? prettyJson(body) : null };
}

/** A recording line (docs/recording.md#recording-line) that `replay` sends byte-identical; the body is read again from the row's bytes. */
export function recordLine(row: Inspected, secret: Secrets): string {
  const { signatureValid, signatureRule, signatureScheme, signatureReason } = row.verdict;
  return formatRequestLine({ ...row, verdict: { signatureValid, signatureRule, signatureScheme, signatureReason, ...readJsonBody(row.raw) } }, secret);
}
