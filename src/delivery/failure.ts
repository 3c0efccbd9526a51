import type { DeliveryResult } from "./types.js";

/** Why a message was given up: the dead-letter line's `failure` and serve's failed table. */
export interface Failure {
  reason: string;
  attempts: number;
  status: number | null;
}

export interface FailureWording {
  /** Overrides the reason (replay's "interrupted"). */
  reason?: string;
  /** Name the URL before its error even when there is only one (serve's failed table does). */
  alwaysNameUrl?: boolean;
}

/** The failure of a result: why, how many attempts (the most of any URL), the first status seen. */
export function failureOf(result: DeliveryResult, wording: FailureWording = {}): Failure {
  let attempts = 0;
  let status: number | null = null;
  const reasons: string[] = [];
  const nameUrl = wording.alwaysNameUrl === true || result.urls.length > 1;
  for (const url of result.urls) {
    attempts = Math.max(attempts, url.attempts);
    if (status === null && url.status !== null) status = url.status;
    if (wording.alwaysNameUrl) reasons.push(`${url.url}: ${url.error ?? `status ${url.status ?? "none"}`}`);
    else if (url.error !== null) reasons.push(nameUrl ? `${url.url}: ${url.error}` : url.error);
  }
  const fallback = wording.alwaysNameUrl ? "no webhook URL configured" : "not delivered";
  return { reason: wording.reason ?? (reasons.join("; ") || fallback), attempts, status };
}
