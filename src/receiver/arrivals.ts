import { clipText } from "../safe-text/clip.js";
import { printable } from "../safe-text/printable.js";
import type { SchemeName } from "../signing/schemes.js";
import type { RequestFacts } from "./match.js";
import type { RequestVerdict } from "./verdict.js";

/*
 * A received request in brief: what matchers compare, its verdict and its answer, in a few small
 * fields (no body, no headers). The control API lists and counts these; `expect` and the library's
 * waitFor show them when what was awaited did not come. Pure.
 */

/** The longest text an arrival keeps of a field a sender chose (path, user, event, reason). */
const MAX_TEXT = 256;

export interface Arrival extends RequestFacts {
  /** listen's request number, from 1. */
  index: number;
  /** ISO 8601. */
  receivedAt: string;
  signature: "ok" | "failed" | "unsigned";
  /** The signature scheme checked (verified, or failed), or null when none was (docs/schemes.md). */
  scheme: SchemeName | null;
  /** Why it is invalid (the signature's error, else the first shape error), or null. */
  problem: string | null;
  /** The status answered, or null for a held or dropped request. */
  status: number | null;
  fault: "timeout" | "drop" | null;
  /** The --responses rule that answered, or null. */
  rule: number | null;
}

/** What arrivalOf reads: a received request, or an inspector row (its verdict kept without the body). */
export interface ArrivalSource {
  index: number;
  receivedAt: Date;
  method: string;
  path: string;
  verdict: Pick<RequestVerdict, "type" | "userId" | "name" | "bodyKind" | "valid" | "signatureValid" | "signatureError" | "shapeErrors"> &
    Partial<Pick<RequestVerdict, "signatureScheme">>;
  status: number | null;
  fault: "timeout" | "drop" | null;
  rule?: number | null | undefined;
}

/** A request in brief (listen's log stores the same fields by column: control/arrival-ring.ts). */
export function arrivalOf(request: ArrivalSource): Arrival {
  const v = request.verdict;
  return {
    index: request.index,
    receivedAt: isoTime(request.receivedAt.getTime()),
    method: request.method,
    path: clipArrivalText(request.path),
    kind: v.bodyKind,
    type: v.type ?? null,
    event: eventOf(v),
    userId: v.userId !== undefined ? clipArrivalText(v.userId) : null,
    valid: v.valid,
    signature: signatureOf(v),
    scheme: v.signatureScheme ?? null,
    problem: problemOf(v),
    status: request.status,
    fault: request.fault,
    rule: request.rule ?? null,
  };
}

type ArrivalVerdict = ArrivalSource["verdict"];

/** The verdict's name is a track's event (a screen's or page's name otherwise), as factsOf reads it; clipped. */
export function eventOf(v: ArrivalVerdict): string | null {
  return v.type === "track" && v.name !== undefined ? clipArrivalText(v.name) : null;
}

export function signatureOf(v: ArrivalVerdict): Arrival["signature"] {
  return v.signatureValid === true ? "ok" : v.signatureValid === false ? "failed" : "unsigned";
}

/** Why it is invalid (the signature's error, else the first shape error), clipped; null when valid. */
export function problemOf(v: ArrivalVerdict): string | null {
  if (v.valid) return null;
  const problem = v.signatureValid === false ? (v.signatureError ?? "signature failed") : (v.shapeErrors[0]?.message ?? null);
  return problem === null ? null : clipArrivalText(problem);
}

// Requests arriving in the same millisecond share one formatted time.
let lastTime = Number.NaN;
let lastIso = "";

/** ISO 8601 of a time in ms since the epoch. */
export function isoTime(time: number): string {
  if (time !== lastTime) {
    lastIso = new Date(time).toISOString();
    lastTime = time;
  }
  return lastIso;
}

/** What an arrival costs in memory, counted as if each were its own object with its own strings (two bytes a character). */
export function arrivalBytes(arrival: Pick<Arrival, "path" | "event" | "userId" | "problem">): number {
  return 200 + 2 * (arrival.path.length + (arrival.event?.length ?? 0) + (arrival.userId?.length ?? 0) + (arrival.problem?.length ?? 0));
}

/** `#3 POST /hooks  track  u1  "Order Completed"  valid  → 200`; fields a sender chose are made printable. */
export function arrivalLine(a: Arrival): string {
  const what = a.kind === "message" ? (a.type ?? "message") : a.kind === "none" ? "no data" : a.kind === "invalid" ? "not JSON or no message" : a.kind;
  const who = [a.userId !== null ? printable(a.userId) : null, a.event !== null ? JSON.stringify(printable(a.event)) : null].filter((part) => part !== null);
  const scheme = a.scheme !== null && a.scheme !== "default" && a.signature === "ok" ? ` (${a.scheme} signature)` : "";
  const verdict = a.valid ? `valid${scheme}` : `invalid (${printable(a.problem ?? "invalid")})`;
  const answer = a.fault === "timeout" ? "held" : a.fault === "drop" ? "dropped" : `${a.status ?? "-"}${a.rule !== null ? ` (rule ${a.rule})` : ""}`;
  return [`#${a.index} ${printable(a.method)} ${printable(a.path)}`, what, ...who, verdict, `→ ${answer}`].join("  ");
}

/**
 * What did arrive, for a wait that ended without its match: a count by type and verdict, then the
 * last `max` arrivals one per line. `total` counts every request received, `shown` the ones at hand.
 */
export function arrivalsReport(arrivals: readonly Arrival[], total: number, max = 20): string {
  if (total === 0) return "Nothing arrived.";
  const counts = new Map<string, number>();
  for (const a of arrivals) {
    const key = `${a.kind === "message" ? (a.type ?? "message") : a.kind} (${a.valid ? "valid" : "invalid"})`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const tally = [...counts].map(([key, count]) => `${count} ${key}`).join(", ");
  const lines = arrivals.slice(-max).map((a) => `  ${arrivalLine(a)}`);
  const older = total - Math.min(arrivals.length, max);
  const head = `${total} request${total === 1 ? "" : "s"} arrived${arrivals.length < total ? ` (the last ${arrivals.length} kept: ${tally})` : `: ${tally}`}`;
  return [head, ...(older > 0 ? [`  … ${older} earlier`] : []), ...lines].join("\n");
}

/** A field a sender chose, as an arrival keeps it: at most 256 characters. */
export function clipArrivalText(text: string): string {
  return clipText(text, MAX_TEXT);
}
