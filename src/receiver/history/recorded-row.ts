import { FIRST_ELEMENT_NOTE, type SignatureChecker } from "../signature-check.js";
import { SCHEME_NAMES, type SchemeName } from "../../signing/schemes.js";
import { checkerOf, judgeRequest, judgeWith, type RequestHeaders, type RequestVerdict } from "../verdict.js";
import { isPlainObject, parseUntrustedJson } from "../../json/parse.js";
import type { KeptResponse } from "./kept.js";
import type { NewInspected } from "./store.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export interface RecordedRowOptions {
  /** With a secret (or a checker), the signature is checked again; without, the recorded verdict is shown. */
  secret?: string | undefined;
  /** The signature check to judge with (inspect's flags: scheme, secrets, tolerance), built once; wins over `secret`. */
  checker?: SignatureChecker | undefined;
  strict: boolean;
}

/**
 * A recording line (docs/recording.md#recording-line), or a bare message line as replay takes
 * it, as an inspector row: the bytes received (`rawBody`, else `JSON.stringify(body)`), judged by
 * the one verifier. Pure. A line that is neither is a row that says why.
 */
export function rowFromLine(text: string, number: number, options: RecordedRowOptions): Omit<NewInspected, "label"> {
  let value: unknown;
  try {
    value = parseUntrustedJson(text);
  } catch (error) {
    return unreadable(`line ${number} is not JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(value)) return unreadable(`line ${number} is not a recording line: expected a JSON object`);
  if (!Object.hasOwn(value, "type") && Object.hasOwn(value, "body")) return fromEnvelope(value, number, options);
  // A bare message, as `generate` writes and replay takes: sent as JSON.stringify of it.
  const raw = Buffer.from(JSON.stringify(value));
  return {
    receivedAt: dateOf(value["timestamp"]),
    method: "POST",
    path: "/",
    headers: {},
    raw,
    verdict: judgeRequest(raw, {}, { strict: options.strict }),
    status: null,
    fault: null,
    injected: false,
    response: null,
  };
}

function fromEnvelope(envelope: Record<string, unknown>, number: number, options: RecordedRowOptions): Omit<NewInspected, "label"> {
  const rawBody = envelope["rawBody"];
  let raw: Buffer;
  if (typeof rawBody === "string") {
    if (rawBody.length % 4 !== 0 || !BASE64.test(rawBody)) return unreadable(`line ${number}: key "rawBody" is not base64`);
    raw = Buffer.from(rawBody, "base64");
  } else raw = Buffer.from(JSON.stringify(envelope["body"] ?? null));
  const headers = headersOf(envelope["headers"]);
  const receivedAt = dateOf(envelope["receivedAt"]);
  const path = typeof envelope["path"] === "string" ? envelope["path"] : "/";
  const checker = options.checker ?? checkerOf({ secret: options.secret });
  // A timestamped signature is held to the time it arrived, not to today's clock.
  const judged = judgeWith(raw, headers, { checker, strict: options.strict, path, now: receivedAt.getTime() });
  const response = responseOf(envelope["response"]);
  return {
    receivedAt,
    method: typeof envelope["method"] === "string" ? envelope["method"] : "POST",
    path,
    headers,
    raw,
    verdict: checker === undefined ? recordedSignature(judged, envelope) : judged,
    // The recording keeps the app's answer, not listen's: the sender got the app's when it relayed.
    status: response?.status ?? null,
    fault: null,
    injected: false,
    response,
  };
}

/** Without a secret, the signature verdict is the one listen recorded (with its rule for a batch). */
function recordedSignature(verdict: RequestVerdict, envelope: Record<string, unknown>): RequestVerdict {
  const recorded = envelope["signatureValid"];
  const signatureValid = recorded === true || recorded === false ? recorded : null;
  const rule = envelope["signatureRule"] === "first-element" ? "first-element" : "body";
  const scheme = SCHEME_NAMES.includes(envelope["signatureScheme"] as SchemeName) ? (envelope["signatureScheme"] as SchemeName) : null;
  const header = scheme === null || scheme === "default" ? "X-Signature" : `the ${scheme} signature`;
  return {
    ...verdict,
    signatureValid,
    signatureRule: signatureValid === true ? rule : null,
    signatureScheme: signatureValid === null ? null : scheme,
    signatureError: signatureValid === false ? `${header} failed when recorded (give --secret to check it again)` : null,
    signatureNote: signatureValid === true && rule === "first-element" ? FIRST_ELEMENT_NOTE : null,
    diagnosis: null,
    valid: signatureValid !== false && verdict.shapeErrors.length === 0,
  };
}

/** The recorded app's answer (docs/recording.md#forwarded-response) as a row keeps one. */
function responseOf(value: unknown): KeptResponse | null {
  if (!isPlainObject(value)) return null;
  const status = typeof value["status"] === "number" ? value["status"] : null;
  const ms = typeof value["ms"] === "number" ? value["ms"] : 0;
  const error = typeof value["error"] === "string" ? value["error"] : null;
  const headers = headersOf(value["headers"]) as Record<string, string | string[]>;
  let body: Buffer | null = null;
  if (typeof value["body"] === "string") body = Buffer.from(value["body"]);
  else if (typeof value["bodyBase64"] === "string") body = Buffer.from(value["bodyBase64"], "base64");
  const bodySha256 = typeof value["bodySha256"] === "string" ? value["bodySha256"] : null;
  const bodySize = typeof value["bodySize"] === "number" ? value["bodySize"] : (body?.length ?? 0);
  return { status, ms, headers, error, body, bodySize, bodySha256: body === null ? bodySha256 : null };
}

/** Header values as node:http gives them: strings, or lists of strings; anything else is left out. */
function headersOf(value: unknown): RequestHeaders {
  if (!isPlainObject(value)) return {};
  const headers: Record<string, string | string[]> = {};
  for (const [name, one] of Object.entries(value)) {
    if (typeof one === "string") headers[name.toLowerCase()] = one;
    else if (Array.isArray(one) && one.every((item) => typeof item === "string")) headers[name.toLowerCase()] = one as string[];
  }
  return headers;
}

function dateOf(value: unknown): Date {
  const date = typeof value === "string" ? new Date(value) : new Date(0);
  return Number.isNaN(date.getTime()) ? new Date(0) : date;
}

/** A line that is no recording line: shown as a row with no body, invalid, saying why. */
function unreadable(reason: string): Omit<NewInspected, "label"> {
  const raw = Buffer.alloc(0);
  const verdict = judgeRequest(raw, {}, {});
  return {
    receivedAt: new Date(0),
    method: "–",
    path: "–",
    headers: {},
    raw,
    verdict: { ...verdict, bodyKind: "invalid", shapeErrors: [{ key: "(line)", message: reason }], valid: false },
    status: null,
    fault: null,
    injected: false,
    response: null,
  };
}
