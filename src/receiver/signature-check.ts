import { firstElementBytes, isJsonArrayBody, type ByteSpan } from "../json/first-element.js";
import {
  carriesScheme,
  keyTable,
  recogniseSchemes,
  SCHEME_NAMES,
  schemeNamed,
  SCHEMES,
  verifyOrRefuse,
  type KeyTable,
  type Scheme,
  type SchemeName,
  type Verification,
} from "../signing/index.js";
import { signingKey, verify, type SecretKey } from "../signing/x-signature.js";
import { diagnoseSignature } from "./diagnose.js";
import type { RequestHeaders, RequestVerdict } from "./verdict.js";

/**
 * A verdict's signature fields, taken from RequestVerdict (which documents each) so the two cannot
 * drift: the public type is the one spelled out, since the package does not export this one.
 */
export type SignatureCheck = Pick<
  RequestVerdict,
  | "signatureValid"
  | "signatureError"
  | "signatureRule"
  | "signatureNote"
  | "diagnosis"
  | "signatureScheme"
  | "signatureReason"
  | "signatureSecret"
  | "skewSeconds"
>;

/**
 * The bytes an X-Signature matched: the whole body (the classic destination, and Webhooks (Actions)
 * for one event), or element 0 of a batch exactly as it stands in the raw body (Webhooks (Actions)
 * signs `JSON.stringify` of the first event's data only). Every other scheme signs the whole body.
 */
export type SignatureRule = NonNullable<SignatureCheck["signatureRule"]>;

/** Why a signature failed: the verifier's reasons, or `unrecognised` (no scheme's signature header). */
export type SignatureReason = NonNullable<SignatureCheck["signatureReason"]>;

/** How requests are verified: built once per receiver (docs/receiver.md#signature-check). */
export interface SignatureSettings {
  /** The one scheme required; undefined: each scheme is recognised by its signature header. */
  scheme?: string | undefined;
  /** Every secret accepted (key rotation), in order; none: nothing is checked. */
  secrets: readonly string[];
  /** How far a timestamp may be from the clock, in seconds; default each scheme's own. */
  toleranceSeconds?: number | undefined;
  /** Twilio signs the URL: the URL the sender used, up to the path (a proxy or tunnel in front); default `http(s)://` + the Host header. */
  publicUrl?: string | undefined;
  /** Reached over TLS (the URL Twilio signed starts `https://`). */
  secure?: boolean | undefined;
}

export const FIRST_ELEMENT_NOTE =
  "X-Signature covers element 0 only (the Webhooks (Actions) batch rule): the other elements are not signed, and a receiver that hashes the whole body would reject this batch";
export const NO_DATA_NOTE = "no X-Signature: Webhooks (Actions) sends none for a request without data (no body)";
export const NULL_FIRST_NOTE =
  "no X-Signature: Webhooks (Actions) sends none when a batch's element 0 is null (an event without data), so nothing in this batch is signed";

/** No signature checked (no secret; a request refused before its body was read): every field null. */
export const NOT_CHECKED: SignatureCheck = result(null, null, null, null);
const NO_DATA: SignatureCheck = result(null, null, null, NO_DATA_NOTE);
const NULL_FIRST: SignatureCheck = result(null, null, null, NULL_FIRST_NOTE);
const NULL_BYTES = Buffer.from("null");
const X_SIGNATURE = "x-signature";

/** The schemes the signing room's verifier checks when recognised (`default` is X-Signature's own check, below). */
const OTHER_SCHEMES = SCHEME_NAMES.filter((name) => name !== "default");
const LOOKED_FOR = OTHER_SCHEMES.map((name) => SCHEMES[name].signature.name).join(", ");

/**
 * THE receiver's signature check (docs/receiver.md#signature-check), built once from listen's flags:
 * each scheme's keys made once, the answers that repeat made once. `default` keeps X-Signature's
 * rules (the whole body or a batch's element 0; no header where the sender sends none; the
 * diagnosis); every other scheme is the signing room's one verifier over the whole body.
 */
export class SignatureChecker {
  /** As given (a copy). */
  readonly settings: SignatureSettings;
  private readonly required: Scheme | undefined;
  private readonly keys: KeyTable;
  private readonly xKeys: SecretKey[];
  private readonly bodyMatch: SignatureCheck[];
  private readonly firstElementMatch: SignatureCheck[];
  private readonly missing: SignatureCheck;

  /** A scheme named and a secret its format refuses: a SecretFormatError now, before anything is received. */
  constructor(settings: SignatureSettings) {
    const secrets = [...settings.secrets];
    this.settings = { ...settings, secrets };
    this.required = settings.scheme === undefined ? undefined : schemeNamed(settings.scheme);
    this.keys = secrets.length > 0 ? keyTable(this.required, secrets, OTHER_SCHEMES) : new Map();
    this.xKeys = secrets.map((secret) => signingKey(secret));
    this.bodyMatch = secrets.map((_, i) => verified("default", "body", null, i));
    this.firstElementMatch = secrets.map((_, i) => verified("default", "first-element", FIRST_ELEMENT_NOTE, i));
    const missing =
      this.required === undefined ? `missing X-Signature header (nor any other scheme's: looked for ${LOOKED_FOR})` : "missing X-Signature header";
    this.missing = failed(this.required === undefined ? null : "default", this.required === undefined ? "unrecognised" : "missing", missing);
  }

  /** One request's check: `path` is its request-target (Twilio's URL ends with it), `now` the receiver's clock in ms. */
  check(raw: Uint8Array, headers: RequestHeaders, path: string, now: number): SignatureCheck {
    if (this.settings.secrets.length === 0) return NOT_CHECKED;
    if (this.required !== undefined) return this.checkOne(this.required.name, raw, headers, path, now);
    let found = -1;
    let count = 0;
    for (let i = 0; i < SCHEME_NAMES.length; i++) {
      if (carriesScheme(headers, i)) {
        if (found === -1) found = i;
        count += 1;
      }
    }
    if (found === -1) return this.xSignature(raw, undefined);
    if (count === 1) return this.checkOne(SCHEME_NAMES[found] as SchemeName, raw, headers, path, now);
    return this.checkEach(raw, headers, path, now);
  }

  private checkOne(name: SchemeName, raw: Uint8Array, headers: RequestHeaders, path: string, now: number): SignatureCheck {
    if (name === "default") return this.xSignature(raw, headers[X_SIGNATURE]);
    const scheme = SCHEMES[name];
    const url = scheme.content === "url+form" ? this.urlOf(headers, path) : undefined;
    return fromVerification(verifyOrRefuse(scheme, this.keys, { headers, body: raw, url, now }, { toleranceSeconds: this.settings.toleranceSeconds }));
  }

  /**
   * A request carrying several schemes' signatures (a sender moving to Standard Webhooks keeps its
   * old header beside the new ones): each is checked and every one must verify
   * (docs/schemes.md#recognition); the verdict names the first that failed, else the newest verified.
   */
  private checkEach(raw: Uint8Array, headers: RequestHeaders, path: string, now: number): SignatureCheck {
    const checks = recogniseSchemes(headers).map((name) => this.checkOne(name, raw, headers, path, now));
    const failure = checks.find((check) => check.signatureValid !== true);
    const chosen = failure ?? (checks[checks.length - 1] as SignatureCheck);
    const others = checks
      .filter((check) => check !== chosen)
      .map((check) => `${check.signatureScheme} (${check.signatureValid === true ? "verified" : "failed"})`);
    return { ...chosen, signatureNote: `the request carries ${checks.length} schemes' signatures, each checked: also ${others.join(", ")}` };
  }

  /** X-Signature: HMAC-SHA1 of the whole raw body, then, for a JSON array, of its element 0's bytes as received (never re-serialized). */
  private xSignature(raw: Uint8Array, header: string | string[] | undefined): SignatureCheck {
    const value = Array.isArray(header) ? header[0] : header;
    if (value === undefined || value === "") {
      if (raw.byteLength === 0) return NO_DATA;
      return isJsonArrayBody(raw) && isNullSpan(raw, firstElementBytes(raw)) ? NULL_FIRST : this.missing;
    }
    // The whole body first: one HMAC per secret for every single request, signed either way.
    for (let i = 0; i < this.xKeys.length; i++) if (verify(this.xKeys[i] as SecretKey, raw, value)) return this.bodyMatch[i] as SignatureCheck;
    const span = isJsonArrayBody(raw) ? firstElementBytes(raw) : null;
    if (span !== null) {
      const first = raw.subarray(span.start, span.end);
      for (let i = 0; i < this.xKeys.length; i++) if (verify(this.xKeys[i] as SecretKey, first, value)) return this.firstElementMatch[i] as SignatureCheck;
    }
    const tried = this.xKeys.length > 1 ? ` under any of ${this.xKeys.length} secrets` : "";
    const error = span !== null ? `X-Signature matches neither the whole body nor its element 0${tried}` : `X-Signature does not match the body${tried}`;
    return { ...failed("default", "mismatch", error), diagnosis: diagnoseSignature(raw, value, this.settings.secrets[0] as string, span) };
  }

  /** The URL the sender used (Twilio signs it): --public-url joined with the request-target, else the Host it reached. */
  private urlOf(headers: RequestHeaders, path: string): string | undefined {
    const { publicUrl, secure } = this.settings;
    if (publicUrl !== undefined) return path === "" ? publicUrl : `${publicUrl.replace(/\/+$/, "")}${path}`;
    const host = headers["host"];
    return typeof host === "string" && host !== "" ? `${secure ? "https" : "http"}://${host}${path}` : undefined;
  }
}

function isNullSpan(raw: Uint8Array, span: ByteSpan | null): boolean {
  return span !== null && span.end - span.start === 4 && NULL_BYTES.equals(raw.subarray(span.start, span.end));
}

/** The verifier's answer in the verdict's words (one object: this runs for every request). */
function fromVerification(verdict: Verification): SignatureCheck {
  const ok = verdict.ok;
  return {
    signatureValid: ok,
    signatureError: ok ? null : verdict.message,
    signatureRule: ok ? "body" : null,
    signatureNote: null,
    diagnosis: null,
    signatureScheme: verdict.scheme,
    signatureReason: ok ? null : verdict.reason,
    signatureSecret: ok ? verdict.secretIndex + 1 : null,
    skewSeconds: verdict.skewSeconds ?? null,
  };
}

function verified(scheme: SchemeName, rule: SignatureRule, note: string | null, secretIndex: number): SignatureCheck {
  return { ...result(true, null, rule, note), signatureScheme: scheme, signatureSecret: secretIndex + 1 };
}

function failed(scheme: SchemeName | null, reason: SignatureReason, error: string): SignatureCheck {
  return { ...result(false, error, null, null), signatureScheme: scheme, signatureReason: reason };
}

function result(
  signatureValid: boolean | null,
  signatureError: string | null,
  signatureRule: SignatureRule | null,
  signatureNote: string | null,
): SignatureCheck {
  return {
    signatureValid,
    signatureError,
    signatureRule,
    signatureNote,
    diagnosis: null,
    signatureScheme: null,
    signatureReason: null,
    signatureSecret: null,
    skewSeconds: null,
  };
}

/** `secret` then `secrets` (a receiver's and judgeRequest's options): every secret a request may be signed with. */
export function receiverSecrets(options: { secret?: string | undefined; secrets?: readonly string[] | undefined }): string[] {
  return options.secret === undefined ? [...(options.secrets ?? [])] : [options.secret, ...(options.secrets ?? [])];
}

/** Whether two settings build the same checker (the library's judgeRequest keeps the last one built). */
export function sameSettings(a: SignatureSettings, b: SignatureSettings): boolean {
  return (
    a.scheme === b.scheme &&
    a.toleranceSeconds === b.toleranceSeconds &&
    a.publicUrl === b.publicUrl &&
    a.secure === b.secure &&
    a.secrets.length === b.secrets.length &&
    a.secrets.every((secret, i) => secret === b.secrets[i])
  );
}
