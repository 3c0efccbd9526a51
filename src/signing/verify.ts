import { clipText } from "../safe-text/clip.js";
import { bodyHash, bodyHashOf, isForm, macOf, urlForms, type ContentFields } from "./content.js";
import type { Scheme, SchemeName, SignatureHeader } from "./schemes.js";
import type { SchemeKey } from "./secrets.js";
import { sameText } from "./x-signature.js";

/** Request headers as node:http gives them (lower-case names). */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** A request as received: what any scheme may have signed. */
export interface VerifyInput {
  headers: RequestHeaders;
  /** The body's bytes exactly as received. */
  body: Uint8Array;
  /** The full URL the sender used (Twilio signs it): what the receiver was reached at, or its public URL behind a proxy. */
  url?: string | undefined;
  /** The receiver's clock, milliseconds since the epoch. */
  now: number;
}

export interface VerifyOptions {
  /** How far the timestamp may be from `now`, in seconds; default the scheme's (Stripe 300, Standard Webhooks and Slack 5 min). */
  toleranceSeconds?: number | undefined;
}

export interface Verified {
  ok: true;
  scheme: SchemeName;
  /** The header whose signature matched. */
  header: string;
  /** Which secret matched (0: the first given). */
  secretIndex: number;
  /** The message id header's value, when the scheme has one and it was sent. */
  id: string | undefined;
  /** The signed timestamp (Unix seconds), for a timestamped scheme. */
  timestamp: number | undefined;
  /** The receiver's clock minus the timestamp, in seconds: positive when the timestamp is behind. */
  skewSeconds: number | undefined;
}

/**
 * Why a signature was refused: a header the scheme needs is `missing`; a header or URL part is
 * `malformed`; no signature matches (`mismatch`); it matches but the timestamp is `stale`; Twilio
 * has `no-url` to check against, or the body does not match the URL's `bodySHA256` (`body-hash`);
 * no secret given is in the scheme's format (`secret`: recognition only, see recognise.ts).
 */
export type RefusalReason = "missing" | "malformed" | "mismatch" | "stale" | "no-url" | "body-hash" | "secret";

export interface Refused {
  ok: false;
  scheme: SchemeName;
  reason: RefusalReason;
  /** The header at fault; null when it is the URL. */
  header: string | null;
  /** Which part of it (`t=`, `v1,`, `sha256=`, `timestamp`, `bodySHA256`), or null for the whole. */
  part: string | null;
  /** One line a developer debugging a mismatch reads: the header, the part, the lengths, the skew. */
  message: string;
  /** mismatch: the length of the signature computed (without prefix) and of each one given. */
  expectedLength?: number;
  gotLengths?: number[];
  secretsTried?: number;
  /** stale (and a mismatch whose timestamp is stale too): the skew and the tolerance it broke. */
  skewSeconds?: number;
  toleranceSeconds?: number;
}

export type Verification = Verified | Refused;

/**
 * THE verifier (docs/schemes.md#verification): whether `request` carries a signature of `scheme`
 * made with one of `keys`, and if not, why. Pure: headers, bytes, URL and clock in, a tagged value
 * out; never throws for what a request holds. The signature is computed over the body's bytes as
 * received and compared in constant time; a matching signature is then held to the timestamp's tolerance.
 */
export function verifySignature(scheme: Scheme, keys: readonly SchemeKey[], request: VerifyInput, options: VerifyOptions = {}): Verification {
  let header = scheme.signature;
  let value = headerValue(request.headers, header.name);
  if (value === undefined && scheme.legacy) {
    const legacy = headerValue(request.headers, scheme.legacy.name);
    if (legacy !== undefined) [header, value] = [scheme.legacy, legacy];
  }
  if (value === undefined) return refused(scheme, "missing", header.name, null, `${header.name} is missing`);
  const parsed = parseSignatures(scheme, header, value);
  if ("problem" in parsed) return refused(scheme, "malformed", header.name, parsed.part, `${header.name}: ${parsed.problem}`);
  const meta = readMeta(scheme, request, parsed.timestamp);
  if ("refusal" in meta) return meta.refusal;
  const fields: ContentFields = { body: request.body, id: meta.id ?? "", timestamp: meta.timestamp ?? "", url: "", contentType: undefined };
  const urls = scheme.content === "url+form" ? twilioUrls(scheme, request, fields) : [""];
  if (!Array.isArray(urls)) return urls;
  const clock = skewOf(scheme, meta.timestamp, request.now, options);
  for (const key of keys) {
    for (const url of urls) {
      fields.url = url;
      if (matchesAny(macOf(scheme, header, key.key, fields), parsed.signatures)) {
        if (clock?.stale) return staleRefusal(scheme, clock);
        return {
          ok: true,
          scheme: scheme.name,
          header: header.name,
          secretIndex: key.index,
          id: meta.id,
          timestamp: clock?.timestamp,
          skewSeconds: clock?.skew,
        };
      }
    }
  }
  return mismatch(scheme, header, parsed.signatures, keys.length, clock);
}

/** A header's value, several of one name joined as node:http joins them. */
function headerValue(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[lowerCase(name)];
  return Array.isArray(value) ? value.join(", ") : value;
}

const LOWER = new Map<string, string>();
function lowerCase(name: string): string {
  let lower = LOWER.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    LOWER.set(name, lower);
  }
  return lower;
}

type Parsed = { signatures: string[]; timestamp: string | undefined } | { problem: string; part: string | null };

/** The signatures a header carries (the prefix taken off) and, for Stripe, its `t=` part. */
function parseSignatures(scheme: Scheme, header: SignatureHeader, value: string): Parsed {
  const entries = header.separator === undefined ? [value] : value.split(header.separator);
  const part = scheme.timestamp?.part;
  const timestamp = part === undefined ? undefined : entries.find((entry) => entry.startsWith(part))?.slice(part.length);
  if (part !== undefined && timestamp === undefined) return { problem: `no ${part} timestamp part`, part };
  const signatures = entries
    .filter((entry) => entry.length > header.prefix.length && entry.startsWith(header.prefix))
    .map((entry) => entry.slice(header.prefix.length));
  if (signatures.length > 0) return { signatures, timestamp };
  if (value.trim() === "") return { problem: "is empty", part: null };
  const shown = clipText(value, 40);
  return { problem: `no signature starting ${header.prefix} (got ${JSON.stringify(shown)})`, part: header.prefix };
}

type Meta = { id: string | undefined; timestamp: string | undefined } | { refusal: Refused };

/** The id and timestamp the scheme signs, read from their headers (or the signature header's part). */
function readMeta(scheme: Scheme, request: VerifyInput, partTimestamp: string | undefined): Meta {
  const id = scheme.id ? headerValue(request.headers, scheme.id.header) : undefined;
  if (scheme.id && scheme.content === "id.timestamp.body" && id === undefined) return missing(scheme, scheme.id.header);
  const where = scheme.timestamp?.header;
  const timestamp = where === undefined ? partTimestamp : headerValue(request.headers, where);
  if (scheme.timestamp === undefined) return { id, timestamp: undefined };
  const label = where ?? scheme.signature.name;
  if (timestamp === undefined) return missing(scheme, label);
  if (!/^\d{1,15}$/.test(timestamp)) {
    const shown = JSON.stringify(clipText(timestamp, 20));
    return {
      refusal: refused(
        scheme,
        "malformed",
        label,
        where ? "timestamp" : (scheme.timestamp.part ?? null),
        `${label}: the timestamp is not Unix seconds (got ${shown})`,
      ),
    };
  }
  return { id, timestamp };
}

function missing(scheme: Scheme, header: string): { refusal: Refused } {
  return { refusal: refused(scheme, "missing", header, null, `${header} is missing`) };
}

interface Clock {
  timestamp: number;
  skew: number;
  tolerance: number;
  stale: boolean;
}

/** How far the signed timestamp is from the receiver's clock, and whether that is beyond the tolerance the scheme's owner applies. */
function skewOf(scheme: Scheme, timestamp: string | undefined, now: number, options: VerifyOptions): Clock | undefined {
  if (scheme.timestamp === undefined || timestamp === undefined) return undefined;
  const seconds = Number(timestamp);
  const skew = Math.floor(now / 1000) - seconds;
  const tolerance = options.toleranceSeconds ?? scheme.timestamp.toleranceSeconds;
  const stale = skew > tolerance || (scheme.timestamp.refuses === "both" && -skew > tolerance);
  return { timestamp: seconds, skew, tolerance, stale };
}

/** Twilio: the URL forms to try, after the URL's bodySHA256 is checked for a body that is not a form. */
function twilioUrls(scheme: Scheme, request: VerifyInput, fields: ContentFields): string[] | Refused {
  const url = request.url;
  if (url === undefined || url === "") return refused(scheme, "no-url", null, null, `${scheme.name} signs the URL, and no URL was given to check against`);
  fields.contentType = headerValue(request.headers, "content-type");
  if (isForm(fields.contentType)) return urlForms(url);
  const given = bodyHashOf(url);
  if (given === undefined) {
    return refused(
      scheme,
      "malformed",
      null,
      "bodySHA256",
      `the body is not a form, so the URL must carry bodySHA256 (the body's SHA-256), and ${url} does not`,
    );
  }
  const expected = bodyHash(request.body);
  if (!sameText(expected, given)) {
    return refused(
      scheme,
      "body-hash",
      null,
      "bodySHA256",
      `the URL's bodySHA256 (${given.length} characters) is not the body's SHA-256 (${expected}): the body changed after signing`,
    );
  }
  return urlForms(url);
}

/** Whether the computed signature equals any given one, compared in constant time over their bytes. */
function matchesAny(expected: string, given: readonly string[]): boolean {
  let found = false;
  for (const signature of given) if (sameText(expected, signature)) found = true;
  return found;
}

function staleRefusal(scheme: Scheme, clock: Clock): Refused {
  const header = scheme.timestamp?.header ?? scheme.signature.name;
  const part = scheme.timestamp?.header ? "timestamp" : (scheme.timestamp?.part ?? null);
  const message = `${header}: the signature matches, but the timestamp is ${describeSkew(clock.skew)}, beyond the ${clock.tolerance} s tolerance (clock skew or a replayed request)`;
  return { ...refused(scheme, "stale", header, part, message), skewSeconds: clock.skew, toleranceSeconds: clock.tolerance };
}

function mismatch(scheme: Scheme, header: SignatureHeader, given: readonly string[], secrets: number, clock: Clock | undefined): Refused {
  const expectedLength = header.encoding === "hex" ? (header.mac === "sha1" ? 40 : 64) : header.mac === "sha1" ? 28 : 44;
  const gotLengths = given.map((signature) => signature.length);
  const lengths = gotLengths.every((length) => length === expectedLength)
    ? `the length is right, ${expectedLength} characters of ${header.encoding}, so ${scheme.content === "body" ? "the body or the secret" : `the body, the secret or the signed ${scheme.content}`} differ from what was signed`
    : `expected ${expectedLength} characters of ${header.encoding}, got ${gotLengths.join(", ")}`;
  const what = given.length > 1 ? `none of ${given.length} signatures matches` : "the signature does not match";
  const tried = secrets > 1 ? ` under any of ${secrets} secrets` : "";
  const late = clock?.stale ? `; the timestamp is also ${describeSkew(clock.skew)}` : "";
  const message = `${header.name}: ${what}${tried} (${lengths})${late}`;
  const result: Refused = { ...refused(scheme, "mismatch", header.name, header.prefix === "" ? null : header.prefix, message), expectedLength, gotLengths };
  result.secretsTried = secrets;
  if (clock) Object.assign(result, { skewSeconds: clock.skew, toleranceSeconds: clock.tolerance });
  return result;
}

/** `412 s old`, `30 s ahead of this clock`, `95841628 s (1109 days) old`. */
export function describeSkew(skew: number): string {
  const seconds = Math.abs(skew);
  const long = seconds >= 2 * 86_400 ? ` (${Math.floor(seconds / 86_400)} days)` : seconds >= 2 * 3_600 ? ` (${Math.floor(seconds / 3_600)} hours)` : "";
  return skew >= 0 ? `${seconds} s${long} old` : `${seconds} s${long} ahead of this clock`;
}

function refused(scheme: Scheme, reason: RefusalReason, header: string | null, part: string | null, message: string): Refused {
  return { ok: false, scheme: scheme.name, reason, header, part, message };
}
