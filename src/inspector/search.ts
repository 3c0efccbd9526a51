import { listSummary } from "./events.js";
import type { Inspected } from "../receiver/history/index.js";
import type { RowSummary } from "./view.js";

/** Rows one search answer holds at most; the page asks again from `next` for more. */
export const MAX_SEARCH_ROWS = 200;
/** Text one search answer looks through at most (bodies or recording lines); the page asks again from `next`. */
export const SEARCH_BUDGET_BYTES = 64 * 1024 * 1024;
/** Searches running at once; more are answered 503. */
export const MAX_SEARCHES = 2;

/** A row as a search meets it: the text it looks in, and the row itself, built only for a match. */
export interface Candidate {
  id: number;
  /** What the free text is looked for in: the body and the list's fields (live), or the recording line (inspect). */
  text: string;
  row(): Promise<Inspected | undefined>;
}

/** The page's filters: free text (lower case), a type and a verdict; empty strings filter nothing. */
export interface SearchQuery {
  text: string;
  type: string;
  verdict: string;
}

export interface SearchAnswer {
  /** Matches, newest first. */
  rows: RowSummary[];
  /** Where to go on (`before=next`), or null when every row was looked at. */
  next: number | null;
  /** Bytes of text looked through. */
  scanned: number;
}

export function searchQuery(params: URLSearchParams): SearchQuery {
  return {
    text: (params.get("q") ?? "").trim().toLowerCase(),
    type: params.get("type") ?? "",
    verdict: params.get("verdict") ?? "",
  };
}

/**
 * Looks through rows newest first for those matching `query`, within MAX_SEARCH_ROWS matches
 * and SEARCH_BUDGET_BYTES of text: a search over a 1 GB recording goes on in steps, each bounded.
 */
export async function search(
  rows: AsyncIterable<Candidate>,
  query: SearchQuery,
  bounds: { rows?: number; bytes?: number | undefined } = {},
): Promise<SearchAnswer> {
  const limits = { rows: bounds.rows ?? MAX_SEARCH_ROWS, bytes: bounds.bytes ?? SEARCH_BUDGET_BYTES };
  const found: RowSummary[] = [];
  let scanned = 0;
  for await (const candidate of rows) {
    if (scanned >= limits.bytes || found.length >= limits.rows) return { rows: found, next: candidate.id + 1, scanned };
    scanned += candidate.text.length;
    if (query.text !== "" && !candidate.text.toLowerCase().includes(query.text)) continue;
    const row = await candidate.row();
    if (!row) continue;
    const summary = listSummary(row);
    if (matchesFilters(summary, query)) found.push(summary);
  }
  return { rows: found, next: null, scanned };
}

/** The Type and Verdict filters, as the page offers them. */
export function matchesFilters(row: RowSummary, query: Pick<SearchQuery, "type" | "verdict">): boolean {
  if (query.type !== "" && typeKey(row) !== query.type) return false;
  switch (query.verdict) {
    case "valid":
      return row.valid;
    case "invalid":
      return !row.valid;
    case "signature":
      return row.signature === "failed";
    case "shape":
      return row.shape === "errors";
    case "unsigned":
      return row.signature === "unsigned";
    default:
      return true;
  }
}

/** The Type filter's value for a row: its message type, or what else its body is. */
function typeKey(row: RowSummary): string {
  if (row.kind === "batch" || row.kind === "payload") return row.kind;
  if (row.kind === "none") return "no data";
  return row.type ?? "(unknown)";
}

/** A live row's searchable text: the list's fields, then the body as text (when it is UTF-8). */
export function liveText(row: Inspected): string {
  const summary = listSummary(row);
  const fields = [summary.label, summary.method, summary.path, summary.kindLabel, summary.userId, summary.name, summary.status, summary.appStatus];
  return `${[...fields, summary.appError, summary.resendUrl].join(" ")}\n${row.raw.toString("utf8")}`;
}
