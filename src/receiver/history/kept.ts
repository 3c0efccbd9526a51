import { createHash } from "node:crypto";
import { MAX_KEPT_BODY_BYTES } from "../../delivery/captured-body.js";
import type { ShapeIssue } from "../../messages/check.js";
import type { RequestHeaders, RequestVerdict } from "../verdict.js";
import { clipText } from "../../safe-text/clip.js";

/*
 * What a row of the inspector keeps in memory, and what that costs. A row
 * keeps the raw bytes it received, not the decoded text or parsed body (read
 * again when a row is opened: a parsed body can take 25 times its size), and
 * an app's answer whole only when small, as recordings do.
 */

/** An answer from an HTTP peer as it arrived: the app behind --forward-to, or a Resend target. */
export interface PeerResponse {
  /** null when no status arrived (unreachable, timed out). */
  status: number | null;
  ms: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  error: string | null;
}

/** An answer as a row keeps it: the body whole when under 64 KB, else only its SHA-256 and size. */
export interface KeptResponse extends Omit<PeerResponse, "body"> {
  /** null when only the digest is kept. */
  body: Buffer | null;
  bodySize: number;
  /** Set when the body is not kept. */
  bodySha256: string | null;
}

/** A verdict as a row keeps it: no text or parsed body, long strings cut, a bounded list of issues. */
export interface KeptVerdict extends Omit<RequestVerdict, "text" | "body"> {
  /** Shape errors and warnings past the ones kept. */
  moreShapeErrors: number;
  moreShapeWarnings: number;
}

/** The issues of each kind a row keeps (a body with 60,000 unknown keys has 60,000 warnings). */
const MAX_KEPT_ISSUES = 50;
/** Longer user ids, event names and issue texts are cut for the list. */
const MAX_KEPT_TEXT = 256;
/** What a row costs beyond its bytes and strings: its objects, as V8 lays them out (an estimate). */
const ROW_OVERHEAD_BYTES = 1024;

export function keepVerdict(verdict: RequestVerdict | KeptVerdict): KeptVerdict {
  if ("moreShapeErrors" in verdict) return verdict;
  const { text: _text, body: _body, ...rest } = verdict;
  return {
    ...rest,
    userId: clip(verdict.userId),
    name: clip(verdict.name),
    shapeErrors: keepIssues(verdict.shapeErrors),
    shapeWarnings: keepIssues(verdict.shapeWarnings),
    moreShapeErrors: Math.max(0, verdict.shapeErrors.length - MAX_KEPT_ISSUES),
    moreShapeWarnings: Math.max(0, verdict.shapeWarnings.length - MAX_KEPT_ISSUES),
  };
}

export function keepResponse(response: PeerResponse): KeptResponse {
  const { body, ...rest } = response;
  if (body.length < MAX_KEPT_BODY_BYTES) return { ...rest, body, bodySize: body.length, bodySha256: null };
  return { ...rest, body: null, bodySize: body.length, bodySha256: createHash("sha256").update(body).digest("hex") };
}

/** What a kept row costs in memory, as the store counts it: its bytes, its strings and a fixed overhead. */
export function rowBytes(row: { path: string; headers: RequestHeaders; raw: Buffer; verdict: KeptVerdict; response: KeptResponse | null }): number {
  const { verdict, response } = row;
  let bytes = ROW_OVERHEAD_BYTES + row.raw.length + row.path.length + headerBytes(row.headers);
  bytes += (verdict.userId?.length ?? 0) + (verdict.name?.length ?? 0);
  for (const issue of [...verdict.shapeErrors, ...verdict.shapeWarnings]) bytes += issue.key.length + issue.message.length;
  if (response) bytes += (response.body?.length ?? 0) + headerBytes(response.headers) + (response.error?.length ?? 0);
  return bytes;
}

function headerBytes(headers: Readonly<Record<string, string | readonly string[] | undefined>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    bytes += name.length;
    for (const one of typeof value === "string" ? [value] : value) bytes += one.length + 16;
  }
  return bytes;
}

function keepIssues(issues: readonly ShapeIssue[]): ShapeIssue[] {
  return issues.slice(0, MAX_KEPT_ISSUES).map((issue) => ({ key: clip(issue.key) as string, message: clip(issue.message) as string }));
}

function clip(text: string | undefined): string | undefined {
  return text === undefined ? text : clipText(text, MAX_KEPT_TEXT);
}
