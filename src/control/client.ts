import { request } from "undici";
import type { Arrival } from "../receiver/arrivals.js";
import { describeBound, readAtMost } from "../util/bounded-read.js";

/* A client of listen's control API (docs/receiver.md#control-api): `expect` waits through it. */

/** The answer of `GET /api/wait`. */
export interface WaitAnswer {
  met: boolean;
  count: number;
  matched: number;
  /** Requests listen received, and those its log no longer holds. */
  received: number;
  dropped: number;
  /** Whether the log still holds every request of the window. */
  complete: boolean;
  /** listen stopped before the wait ended. */
  stopped?: boolean;
  requests: Arrival[];
  window: { received: number; recent: Arrival[] };
}

/**
 * The most of an answer `expect` reads (docs/commands/expect.md#bounds). listen's answer lists at
 * most 40 arrivals of clipped fields, a few tens of KB; past this the URL is no control API.
 */
const MAX_CONTROL_ANSWER_BYTES = 1024 * 1024;

/** What one poll gave: the answer, a refusal to retry (503), or a problem naming why the URL is no control API. */
export type PollOutcome = { kind: "answer"; answer: WaitAnswer } | { kind: "busy" } | { kind: "problem"; message: string };

/** One long-poll; network failures and `signal` (the caller's deadline) reject, and the caller names the URL. */
export async function pollWait(base: string, params: URLSearchParams, signal: AbortSignal): Promise<PollOutcome> {
  const response = await request(`${base}/api/wait?${params}`, { method: "GET", signal, headers: { accept: "application/json" } });
  const bytes = await readAtMost(response.body, MAX_CONTROL_ANSWER_BYTES);
  if (bytes === undefined)
    return { kind: "problem", message: `GET /api/wait answered more than ${describeBound(MAX_CONTROL_ANSWER_BYTES)}: not listen's control API` };
  const text = bytes.toString("utf8");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const error = typeof (body as { error?: unknown } | undefined)?.error === "string" ? (body as { error: string }).error : undefined;
  if (response.statusCode === 503) return { kind: "busy" };
  if (response.statusCode === 200 && typeof (body as WaitAnswer | undefined)?.met === "boolean") return { kind: "answer", answer: body as WaitAnswer };
  return { kind: "problem", message: error ?? `GET /api/wait answered ${response.statusCode}: not listen's control API` };
}
