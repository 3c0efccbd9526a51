import { SecretFormatError } from "../errors.js";
import { SCHEME_NAMES, SCHEMES, schemeNamed, type Scheme, type SchemeName } from "./schemes.js";
import { schemeKeys, type SchemeKey } from "./secrets.js";
import { verifySignature, type VerifyInput, type Refused, type RequestHeaders, type Verification, type VerifyOptions } from "./verify.js";

/**
 * The schemes whose signature header a request carries, in the table's order
 * (docs/schemes.md#recognition). A sender migrating to Standard Webhooks sends its old header beside
 * the new ones, so a request may carry several.
 */
export function recogniseSchemes(headers: RequestHeaders): SchemeName[] {
  return SCHEME_NAMES.filter((_, index) => carriesScheme(headers, index));
}

/** Each scheme's signature header names (the legacy one too), lower-case as node:http gives them, in the table's order. */
const SIGNATURE_HEADERS: readonly (readonly string[])[] = SCHEME_NAMES.map((name) => {
  const { signature, legacy } = SCHEMES[name];
  return (legacy ? [signature.name, legacy.name] : [signature.name]).map((header) => header.toLowerCase());
});

/** Whether a request carries the signature header of the scheme at `index` of SCHEME_NAMES (recognition; the receiver asks per request). */
export function carriesScheme(headers: RequestHeaders, index: number): boolean {
  for (const name of SIGNATURE_HEADERS[index] ?? []) if (headers[name] !== undefined) return true;
  return false;
}

export interface RequestVerifierOptions extends VerifyOptions {
  /** The one scheme required; undefined: each scheme the request carries is recognised by its headers. */
  scheme?: string | undefined;
  /** Every secret accepted (key rotation), in order. */
  secrets: readonly string[];
}

/** A request's verdict on each scheme checked: one entry with --scheme, one per scheme recognised without (none recognised: one refusal). */
export type RequestVerifier = (request: VerifyInput) => Verification[] | [NotRecognised];

/** No scheme's signature header was found. */
export interface NotRecognised {
  ok: false;
  scheme: null;
  reason: "unrecognised";
  header: null;
  part: null;
  message: string;
}

/**
 * The verifier `verify` and the library build once from their options (the receiver's SignatureChecker
 * shares its key table and verifyOrRefuse): keys made once per scheme.
 */
export function requestVerifier(options: RequestVerifierOptions): RequestVerifier {
  const verifyOptions: VerifyOptions = { toleranceSeconds: options.toleranceSeconds };
  const required = options.scheme === undefined ? undefined : schemeNamed(options.scheme);
  const keys = keyTable(required, options.secrets, SCHEME_NAMES);
  if (required !== undefined) return (request) => [verifyOrRefuse(required, keys, request, verifyOptions)];
  return (request) => {
    const names = recogniseSchemes(request.headers);
    if (names.length === 0) return [notRecognised()];
    return names.map((name) => verifyOrRefuse(SCHEMES[name], keys, request, verifyOptions));
  };
}

/** Each scheme's keys, or why none of the secrets given is that scheme's. */
export type KeyTable = ReadonlyMap<SchemeName, SchemeKey[] | SecretFormatError>;

/**
 * The keys a verifier checks with, made once. With a scheme required, its keys alone, and a secret its
 * format refuses is a SecretFormatError now (bad input, nothing received yet); without, the keys of each
 * scheme `recognised` names, where a secret refused only refuses the requests of that scheme, saying why.
 */
export function keyTable(required: Scheme | undefined, secrets: readonly string[], recognised: readonly SchemeName[]): KeyTable {
  const table = new Map<SchemeName, SchemeKey[] | SecretFormatError>();
  if (required !== undefined) table.set(required.name, schemeKeys(required, secrets));
  else for (const name of recognised) table.set(name, keysOrError(SCHEMES[name], secrets));
  return table;
}

/** One request's verdict on `scheme` with the table's keys (a scheme the table holds), or the refusal of its secrets. */
export function verifyOrRefuse(scheme: Scheme, table: KeyTable, request: VerifyInput, options: VerifyOptions): Verification {
  const keys = table.get(scheme.name) as SchemeKey[] | SecretFormatError;
  return keys instanceof SecretFormatError ? secretRefused(scheme, keys) : verifySignature(scheme, keys, request, options);
}

/** The keys of the secrets the scheme's format takes (their places kept); the first refusal when it takes none. */
function keysOrError(scheme: Scheme, secrets: readonly string[]): SchemeKey[] | SecretFormatError {
  const keys: SchemeKey[] = [];
  let refusal: SecretFormatError | undefined;
  secrets.forEach((secret, index) => {
    try {
      const [made] = schemeKeys(scheme, [secret]);
      if (made) keys.push({ key: made.key, index });
    } catch (error) {
      if (!(error instanceof SecretFormatError)) throw error;
      refusal ??= error;
    }
  });
  return keys.length > 0 ? keys : (refusal ?? new SecretFormatError(`scheme ${scheme.name} needs a secret`));
}

/** A recognised scheme no secret given can verify (a text secret for Standard Webhooks): said on the request. */
function secretRefused(scheme: Scheme, error: SecretFormatError): Refused {
  const message = `${scheme.signature.name}: no secret given is a ${scheme.name} secret (${error.message})`;
  return { ok: false, scheme: scheme.name, reason: "secret", header: scheme.signature.name, part: null, message, secretsTried: 0 };
}

function notRecognised(): NotRecognised {
  const names = SCHEME_NAMES.map((name) => SCHEMES[name].signature.name);
  return {
    ok: false,
    scheme: null,
    reason: "unrecognised",
    header: null,
    part: null,
    message: `no signature header of any scheme (looked for ${names.join(", ")})`,
  };
}
