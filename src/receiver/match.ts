import type { MessageType } from "../messages/names.js";
import type { BodyKind } from "./body-shape.js";
import type { RequestVerdict } from "./verdict.js";

export type { BodyKind } from "./body-shape.js";

/*
 * Which received requests a matcher picks (docs/receiver.md#matching-requests): one rule shared by
 * --responses, the library's waitFor, the control API's filters and `expect`. Pure.
 */

/** `valid` and `invalid` as the exit status counts them (signature and shape); `any` for both. */
export type VerdictFilter = "valid" | "invalid" | "any";

/** The facts of one request a matcher compares, known once it is judged. */
export interface RequestFacts {
  method: string;
  path: string;
  kind: BodyKind;
  type: MessageType | null;
  /** A track's event name. */
  event: string | null;
  /** The message's `userId`, else its `anonymousId`. */
  userId: string | null;
  valid: boolean;
}

/** Fields that must all equal; a field left out matches anything. */
export interface RequestMatch {
  type?: MessageType | undefined;
  event?: string | undefined;
  userId?: string | undefined;
  /** Compared without the query string, unless it has one itself. */
  path?: string | undefined;
  /** Compared in upper case. */
  method?: string | undefined;
  kind?: BodyKind | undefined;
  verdict?: VerdictFilter | undefined;
}

/** The fields of a RequestMatch, for the checks that refuse an unknown one (a typo must not match everything). */
export const MATCH_FIELDS = ["type", "event", "userId", "path", "method", "kind", "verdict"] as const;
export const BODY_KINDS: readonly BodyKind[] = ["message", "batch", "payload", "none", "invalid"];
export const VERDICT_FILTERS: readonly VerdictFilter[] = ["valid", "invalid", "any"];

export function factsOf(request: {
  method: string;
  path: string;
  verdict: Pick<RequestVerdict, "type" | "userId" | "name" | "bodyKind" | "valid">;
}): RequestFacts {
  const v = request.verdict;
  return {
    method: request.method,
    path: request.path,
    kind: v.bodyKind,
    type: v.type ?? null,
    // The verdict's name is a track's event (a screen's or page's name otherwise).
    event: v.type === "track" ? (v.name ?? null) : null,
    userId: v.userId ?? null,
    valid: v.valid,
  };
}

/** Whether `facts` has every field `match` names; `defaultVerdict` applies when it names none. */
export function matches(match: RequestMatch, facts: RequestFacts, defaultVerdict: VerdictFilter = "any"): boolean {
  const verdict = match.verdict ?? defaultVerdict;
  if (verdict !== "any" && facts.valid !== (verdict === "valid")) return false;
  if (match.type !== undefined && facts.type !== match.type) return false;
  if (match.event !== undefined && facts.event !== match.event) return false;
  if (match.userId !== undefined && facts.userId !== match.userId) return false;
  if (match.kind !== undefined && facts.kind !== match.kind) return false;
  if (match.method !== undefined && facts.method !== match.method.toUpperCase()) return false;
  if (match.path !== undefined && (match.path.includes("?") ? facts.path : pathOnly(facts.path)) !== match.path) return false;
  return true;
}

/** `{type: "track", event: "Order Completed"}` with valid requests only: how an error message names a matcher. */
export function describeMatch(match: RequestMatch, defaultVerdict: VerdictFilter = "any"): string {
  const fields = MATCH_FIELDS.filter((field) => field !== "verdict" && match[field] !== undefined).map((field) => `${field}: ${JSON.stringify(match[field])}`);
  const verdict = match.verdict ?? defaultVerdict;
  const which = fields.length > 0 ? `{${fields.join(", ")}}` : "any request";
  return verdict === "any" ? which : `${which} with ${verdict === "invalid" ? "an" : "a"} ${verdict} verdict`;
}

function pathOnly(path: string): string {
  const query = path.indexOf("?");
  return query < 0 ? path : path.slice(0, query);
}
