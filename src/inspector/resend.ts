import type { AttemptEvent } from "../delivery/types.js";
import { undiciEngine } from "../delivery/undici-engine.js";
import { judgeRequest } from "../receiver/verdict.js";
import { validateHeader, validateUrl } from "../config/checks.js";
import { DEFAULT_USER_AGENT, HTTP_METHODS, type HttpMethod } from "../config/destination.js";
import type { DeliverCall } from "../delivery/types.js";
import { UsageError } from "../errors.js";
import { firstElementBytes, isJsonArrayBody } from "../json/first-element.js";
import type { Inspected, NewInspected, PeerResponse } from "../receiver/history/index.js";

// Set by the delivery engine itself, or about the original connection only.
const NOT_CARRIED = new Set(["user-agent", "accept-encoding", "proxy-connection", "te", "trailer", "proxy-authorization"]);
const MAX_CARRIED = 50;
/** An edited body may be as large as listen takes a body (1 MiB). */
export const MAX_EDITED_BODY_BYTES = 1024 * 1024;

export interface ResendOptions {
  /** The current secret: the resent bytes are signed with it. */
  secret: string | undefined;
  timeoutMs?: number | undefined;
  /** Edit-then-resend: these bytes instead of the row's (the original row is left as it is). */
  body?: Buffer | undefined;
}

/**
 * Resend: the exact bytes of a row (or an edited body), re-signed with the current secret by the
 * rule the row verified with (docs/receiver.md#signature-check: the whole body, or a batch's
 * element 0), through THE delivery engine (one attempt: the person clicking wants to see this
 * answer, not a retry schedule). The result is a new row linked to the original.
 */
/** The new row, unlabelled: it gets its label once it exists (a refused URL uses up no number). */
export async function resend(original: Inspected, url: string, options: ResendOptions): Promise<Omit<NewInspected, "label">> {
  validateUrl(url, { flag: "Resend URL" });
  const bytes = options.body ?? original.raw;
  if (options.body !== undefined) checkEdited(original, options.body);
  const recorded = asRecorded(original);
  const userAgent = headerValue(original.headers["user-agent"]) ?? DEFAULT_USER_AGENT;
  const engine = undiciEngine(
    { targets: [{ url, headers: carriedHeaders(original) }], secret: options.secret, userAgent },
    { retryWindowMs: 0, timeoutMs: options.timeoutMs },
  );
  let attempt: AttemptEvent | undefined;
  const receivedAt = new Date();
  try {
    const call: DeliverCall = { keepResponse: true, onAttempt: (event) => (attempt = event) };
    if (recorded) call.recorded = recorded;
    const result = await engine.deliver(bytes, call);
    const sent = attempt?.request;
    const headers = lowerCased(sent?.headers ?? {});
    const first = result.urls[0];
    const response: PeerResponse = {
      status: first?.status ?? null,
      ms: first?.ms ?? 0,
      headers: attempt?.response?.headers ?? {},
      body: Buffer.from(attempt?.response?.body ?? "", "utf8"),
      error: first?.error ?? null,
    };
    return {
      receivedAt,
      method: sent?.method ?? "POST",
      path: pathOf(url),
      headers,
      raw: bytes,
      verdict: judgeRequest(bytes, headers, { secret: options.secret }),
      status: response.status,
      fault: null,
      injected: false,
      response,
      resend: { of: original.id, ofLabel: original.label, url, edited: options.body !== undefined },
    };
  } finally {
    await engine.close();
  }
}

/**
 * A Webhooks (Actions) request (a PUT or PATCH, or a batch) is resent with its method and signed
 * by the rule it verified under (a batch that did not verify: over its first element, as its
 * sender signs); anything else is a plain POST (docs/actions.md#replaying-recorded-requests).
 */
function asRecorded(original: Inspected): DeliverCall["recorded"] {
  const method = (HTTP_METHODS as readonly string[]).includes(original.method) ? (original.method as HttpMethod) : "POST";
  const batch = isJsonArrayBody(original.raw);
  if (method === "POST" && !batch) return undefined;
  return { method, rule: original.verdict.signatureRule ?? (batch ? "first-element" : "body") };
}

/**
 * An edited body is signed by the rule its row verified with, so a row verified over a batch's
 * element 0 must stay a batch with an element 0; and it may be as large as listen takes a body.
 */
function checkEdited(original: Inspected, bytes: Buffer): void {
  if (bytes.length > MAX_EDITED_BODY_BYTES) throw new UsageError(`the edited body is over ${MAX_EDITED_BODY_BYTES} bytes (1 MiB, what listen takes)`);
  if (original.verdict.signatureRule === "first-element" && firstElementBytes(bytes) === null)
    throw new UsageError(
      `#${original.label} verified over its element 0 (the Webhooks (Actions) batch rule), so its resend is signed over element 0: the edited body must stay a JSON array with at least one element`,
    );
}

/** The original's end-to-end headers that a static header may carry (the engine sets the rest). */
function carriedHeaders(original: Inspected): Record<string, string> {
  const carried: Record<string, string> = {};
  let count = 0;
  for (const [name, value] of Object.entries(original.headers)) {
    const one = headerValue(value);
    if (one === undefined || NOT_CARRIED.has(name) || count >= MAX_CARRIED) continue;
    try {
      validateHeader(name, one, {});
    } catch {
      continue;
    }
    carried[name] = one;
    count += 1;
  }
  return carried;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}
