import type { AttemptEvent } from "../delivery/types.js";
import { undiciEngine } from "../delivery/undici-engine.js";
import { SignatureChecker, type SignatureSettings } from "../receiver/signature-check.js";
import { judgeWith } from "../receiver/verdict.js";
import { recogniseSchemes, SCHEMES, writtenHeaderNames, type SchemeName } from "../signing/index.js";
import type { MessageIdentity } from "../delivery/request-signer.js";
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
  /** listen's signing: the resent bytes are signed with its secrets by the row's scheme, and the new row judged as listen judges. */
  signing: SignatureSettings;
  timeoutMs?: number | undefined;
  /** Edit-then-resend: these bytes instead of the row's (the original row is left as it is). */
  body?: Buffer | undefined;
}

/**
 * Resend: the exact bytes of a row (or an edited body), signed again with listen's secrets by the
 * row's scheme (docs/receiver.md#resend): X-Signature by the rule the row verified with (the whole
 * body, or a batch's element 0); a timestamped scheme with a fresh timestamp under the row's message
 * id. Through THE delivery engine (one attempt: the person clicking wants to see this answer, not
 * a retry schedule). The result is a new row linked to the original.
 * The new row, unlabelled: it gets its label once it exists (a refused URL uses up no number).
 */
export async function resend(original: Inspected, url: string, options: ResendOptions): Promise<Omit<NewInspected, "label">> {
  validateUrl(url, { flag: "Resend URL" });
  const bytes = options.body ?? original.raw;
  if (options.body !== undefined) checkEdited(original, options.body);
  const recorded = asRecorded(original);
  const userAgent = headerValue(original.headers["user-agent"]) ?? DEFAULT_USER_AGENT;
  const { secrets } = options.signing;
  const scheme = schemeOf(original, options.signing);
  const engine = undiciEngine(
    { targets: [{ url, headers: carriedHeaders(original, secrets.length > 0 ? scheme : undefined) }], secret: secrets[0], secrets, scheme, userAgent },
    { retryWindowMs: 0, timeoutMs: options.timeoutMs },
  );
  let attempt: AttemptEvent | undefined;
  const receivedAt = new Date();
  try {
    const call: DeliverCall = { keepResponse: true, onAttempt: (event) => (attempt = event), identity: identityOf(original, scheme) };
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
      verdict: judgeWith(bytes, headers, { checker: checkerOf(options.signing, sent?.url ?? url), strict: false, path: "", now: receivedAt.getTime() }),
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

/**
 * The row's scheme: the one its verdict names, else the one its headers show (the last recognised:
 * a sender migrating sends its old header beside the new), else listen's --scheme, else X-Signature.
 */
function schemeOf(original: Inspected, signing: SignatureSettings): SchemeName {
  return original.verdict.signatureScheme ?? recogniseSchemes(original.headers).at(-1) ?? (signing.scheme as SchemeName | undefined) ?? "default";
}

/** What the row was sent under: its message id and event headers, kept by the resend (a retry, for an idempotent receiver). */
function identityOf(original: Inspected, scheme: SchemeName): MessageIdentity {
  const { id, event } = SCHEMES[scheme];
  return {
    id: id === undefined ? undefined : headerValue(original.headers[id.header.toLowerCase()]),
    event: event === undefined ? undefined : headerValue(original.headers[event.header.toLowerCase()]),
  };
}

/** The resent request judged as listen judges it; Twilio's signature against the URL it was sent to. */
function checkerOf(signing: SignatureSettings, sentTo: string): SignatureChecker | undefined {
  return signing.secrets.length === 0 ? undefined : new SignatureChecker({ ...signing, publicUrl: sentTo });
}

/**
 * The original's end-to-end headers that a static header may carry (the engine sets the rest).
 * Signing again by `scheme`, the headers its signer writes are left for it to write afresh.
 */
function carriedHeaders(original: Inspected, scheme: SchemeName | undefined): Record<string, string> {
  const carried: Record<string, string> = {};
  const written = new Set(scheme === undefined ? [] : writtenHeaderNames(SCHEMES[scheme]));
  let count = 0;
  for (const [name, value] of Object.entries(original.headers)) {
    const one = headerValue(value);
    if (one === undefined || NOT_CARRIED.has(name) || written.has(name) || count >= MAX_CARRIED) continue;
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
