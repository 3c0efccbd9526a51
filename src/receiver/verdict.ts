import { isUtf8 } from "node:buffer";
import { userIdOf, type ShapeIssue } from "../messages/check.js";
import type { MessageType } from "../messages/schemas.js";
import type { SignatureRule } from "../delivery/actions-request.js";
import type { Diagnosis } from "./diagnose.js";
import { judgeBody } from "./body-shape.js";
import { NOT_CHECKED, receiverSecrets, sameSettings, SignatureChecker, type SignatureSettings } from "./signature-check.js";
import type { RefusalReason } from "../signing/verify.js";
import type { SchemeName } from "../signing/schemes.js";
import { parseUntrustedJson } from "../json/parse.js";
import type { RequestHeaders } from "../signing/verify.js";

export type { RequestHeaders };

export interface VerdictOptions {
  /** The shared secret; without one (nor `secrets`) every request is accepted and marked unsigned. */
  secret?: string | undefined;
  /** Several secrets (key rotation), any of which may have signed; `secret`, when also given, comes first. */
  secrets?: readonly string[] | undefined;
  /** The signature scheme required (docs/schemes.md); default: each recognised by its signature header. */
  scheme?: string | undefined;
  /** How far a timestamped scheme's timestamp may be from `now`, in seconds; default the scheme's own. */
  toleranceSeconds?: number | undefined;
  /** The full URL the sender used (Twilio signs it). */
  url?: string | undefined;
  /** The clock a timestamp is held to (default: now). */
  now?: Date | number | undefined;
  /** Every body must be a message (a batch: of messages), and unknown top-level keys are errors instead of warnings. */
  strict?: boolean;
}

export interface RequestVerdict {
  /** Body size in bytes. */
  size: number;
  /**
   * true: verified; false: missing or wrong; null: not checked, because no secret is configured or
   * the request is one the real sender never signs (no body, or a batch whose element 0 is null).
   */
  signatureValid: boolean | null;
  /** Short reason when `signatureValid` is false. */
  signatureError: string | null;
  /** The bytes the signature matched: the whole body, or element 0 of a batch as received; null when not verified. */
  signatureRule: SignatureRule | null;
  /** The scheme checked: the one verified, or the one that failed; null when none was (no secret, no signature header of any scheme). */
  signatureScheme: SchemeName | null;
  /** Why the signature failed (docs/schemes.md#verification: `missing`, `mismatch`, `stale`, … or `unrecognised`); null unless it did. */
  signatureReason: RefusalReason | "unrecognised" | null;
  /** Which secret matched, from 1 (key rotation); null unless verified. */
  signatureSecret: number | null;
  /** A timestamped scheme's clock skew: the receiver's clock minus the signed timestamp, in seconds; null for the others. */
  skewSeconds: number | null;
  /** Why a request is unsigned by design, that a batch's signature covers element 0 only, or that it carries several schemes' signatures, each checked; else null. */
  signatureNote: string | null;
  diagnosis: Diagnosis | null;
  /** The body decoded as UTF-8, or null when it is not valid UTF-8. */
  text: string | null;
  /** The parsed JSON body; undefined when the body is not JSON. */
  body: unknown;
  /**
   * `message` (an object whose `type` is a message type), `batch` (a JSON array), `payload` (any
   * other object: a mapped payload), `none` (an empty body: no data), `invalid` (none of these).
   */
  bodyKind: "message" | "batch" | "payload" | "none" | "invalid";
  /** A batch's element counts; null for any other body. */
  batch: { elements: number; messages: number; payloads: number; empty: number } | null;
  type: MessageType | undefined;
  userId: string | undefined;
  /** Track's event name or screen's name, for display. */
  name: string | undefined;
  /** Body problems (not JSON, missing or wrongly typed keys), named by key (`[2].event` in a batch). */
  shapeErrors: ShapeIssue[];
  shapeWarnings: ShapeIssue[];
  /** Signature (when checked) and shape both fine: what the exit code counts. */
  valid: boolean;
}

/**
 * The one request verifier (docs/receiver.md#signature-check, docs/receiver.md#shape-check): the
 * signature by its scheme over the raw bytes as received (X-Signature: the whole body, or a batch's
 * element 0), then what the body is and its shape. Pure: bytes and headers in, verdict out. The
 * method is not judged.
 */
export function judgeRequest(raw: Uint8Array, headers: RequestHeaders, options: VerdictOptions = {}): RequestVerdict {
  const now = options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime();
  return judgeWith(raw, headers, { checker: checkerOf(options), strict: options.strict ?? false, path: "", now });
}

/** What a receiver judges a request with: its checker (built once), and where and when the request came. */
export interface JudgeContext {
  checker: SignatureChecker | undefined;
  strict: boolean;
  /** The request-target (Twilio's signed URL ends with it). */
  path: string;
  /** The receiver's clock, ms. */
  now: number;
}

/** judgeRequest with a checker built once (listen, startReceiver, the inspector). */
export function judgeWith(raw: Uint8Array, headers: RequestHeaders, context: JudgeContext): RequestVerdict {
  const signature = context.checker === undefined ? NOT_CHECKED : context.checker.check(raw, headers, context.path, context.now);
  const { text, body, problem } = readJsonBody(raw);
  const shape = judgeBody(body, raw.byteLength === 0, problem, context.strict);
  const message = shape.kind === "message" ? (body as Record<string, unknown>) : undefined;
  const typeBroken = shape.errors.length > 0 && shape.errors.some((e) => e.key === "type" || e.key === "(body)");
  return {
    size: raw.byteLength,
    signatureValid: signature.signatureValid,
    signatureError: signature.signatureError,
    signatureRule: signature.signatureRule,
    signatureNote: signature.signatureNote,
    diagnosis: signature.diagnosis,
    signatureScheme: signature.signatureScheme,
    signatureReason: signature.signatureReason,
    signatureSecret: signature.signatureSecret,
    skewSeconds: signature.skewSeconds,
    text,
    body,
    bodyKind: shape.kind,
    batch: shape.batch,
    type: message === undefined || typeBroken ? undefined : (message["type"] as MessageType),
    userId: userIdOf(message),
    name: stringOf(message?.["event"]) ?? stringOf(message?.["name"]),
    shapeErrors: shape.errors,
    shapeWarnings: shape.warnings,
    valid: signature.signatureValid !== false && shape.errors.length === 0,
  };
}

// The library's judgeRequest keeps the checker of the last options it saw: keys are made once, not per call.
let lastChecker: SignatureChecker | undefined;

/** The checker judgeRequest's options describe (undefined without a secret), reused while they stay the same. */
export function checkerOf(options: Pick<VerdictOptions, "secret" | "secrets" | "scheme" | "toleranceSeconds" | "url">): SignatureChecker | undefined {
  const secrets = receiverSecrets(options);
  if (secrets.length === 0) return undefined;
  const settings: SignatureSettings = { scheme: options.scheme, secrets, toleranceSeconds: options.toleranceSeconds, publicUrl: options.url };
  if (lastChecker === undefined || !sameSettings(lastChecker.settings, settings)) lastChecker = new SignatureChecker(settings);
  return lastChecker;
}

/** A body as the verifier reads it: its UTF-8 text, its parsed JSON, or why it has none. */
export interface JsonBody {
  /** null when the bytes are not valid UTF-8. */
  text: string | null;
  /** undefined when the body is not JSON. */
  body: unknown;
  /** Why there is no parsed body (not UTF-8, empty, not JSON), or null. */
  problem: string | null;
}

/**
 * Decodes and parses a body the way judgeRequest does. The views that show a
 * body later (the inspector, --verbose, a relayed request's recording line)
 * call it again rather than keep the parsed copy: a parsed body can take 25
 * times its size in memory.
 */
export function readJsonBody(raw: Uint8Array): JsonBody {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const text = isUtf8(bytes) ? bytes.toString("utf8") : null;
  if (text === null) return { text, body: undefined, problem: "the body is not valid UTF-8" };
  if (text.length === 0) return { text, body: undefined, problem: "the body is empty" };
  try {
    return { text, body: parseUntrustedJson(text), problem: null };
  } catch (error) {
    return { text, body: undefined, problem: `not JSON: ${(error as Error).message}` };
  }
}

/** The verdict without its text and parsed body, for a request that waits (a parsed body can take 25 times its bytes). */
export function withoutBody(verdict: RequestVerdict): RequestVerdict {
  return { ...verdict, text: null, body: undefined };
}

/** The verdict with its text and parsed body read again from the bytes it was made from. */
export function withBody(verdict: RequestVerdict, raw: Uint8Array): RequestVerdict {
  const { text, body } = readJsonBody(raw);
  return { ...verdict, text, body };
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/**
 * The verdict of a request whose method no webhook uses (other than the health check): invalid,
 * with the reason, so it is shown and counted instead of hidden behind a bare 405.
 */
export function methodNotAllowedVerdict(method: string | undefined): RequestVerdict {
  return unreadVerdict(
    0,
    "(method)",
    `${method ?? "this method"} is not accepted: webhooks arrive as POST, PUT or PATCH (GET /health answers readiness probes)`,
  );
}

/** The verdict of a request refused before its body was read (wrong method, too large): invalid, for one reason. */
export function unreadVerdict(size: number, key: string, message: string): RequestVerdict {
  return {
    size,
    ...NOT_CHECKED,
    text: null,
    body: undefined,
    bodyKind: "invalid",
    batch: null,
    type: undefined,
    userId: undefined,
    name: undefined,
    shapeErrors: [{ key, message }],
    shapeWarnings: [],
    valid: false,
  };
}
