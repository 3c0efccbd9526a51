import { randomBytes } from "node:crypto";
import { resolveSecrets } from "../../../config/secret.js";
import { UsageError } from "../../../errors.js";
import { curlOf } from "../../../inspector/curl.js";
import { messageId, SCHEMES, schemeKeys, signRequest, withBodyHash, type Scheme, type SignedRequest } from "../../../signing/index.js";
import { readBodyInput } from "../../shared/body-input.js";
import { checkFullUrl } from "../../shared/full-url.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import { createOutput } from "../../terminal/output.js";
import { INTERRUPTED } from "../../shared/stdin.js";
import type { SignFlags } from "./options.js";

export type SignOptions = SignFlags & { file?: string | undefined };

/** What --curl and --url must be. */
const FULL_URL = "a full http:// or https:// URL";

/**
 * `sign` (docs/commands/sign.md): the headers a scheme's sender would send with this body, signed
 * with the secrets given; or, with --curl, a command that sends it. Prints what is signed exactly
 * (a URL's query included): the user gave it, and a masked URL or header would not verify.
 */
export async function sign(options: SignOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json });
  const scheme = SCHEMES[options.scheme];
  const secrets = resolveSecrets({ secrets: options.secrets, secretFiles: options.secretFiles, cwd: io.cwd, env: io.env });
  if (secrets.length === 0) throw new UsageError("give a secret to sign with: --secret, --secret-file or $WEBHOOK_SECRET", { flag: "--secret" });
  const keys = schemeKeys(scheme, secrets);
  if (options.curl !== undefined) checkFullUrl(options.curl, "--curl", FULL_URL);
  if (options.url !== undefined) checkFullUrl(options.url, "--url", FULL_URL);
  const body = await readBodyInput(options.file, io, output, "to sign");
  if (body === INTERRUPTED) return interruptedExitCode(io.signal);
  const id = options.id ?? messageId(scheme, randomBytes);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signed = signRequest(scheme, keys, {
    body,
    id,
    timestamp,
    url: options.url ?? options.curl,
    contentType: options.contentType,
    event: options.event,
    legacy: options.legacy,
  });
  if (options.curl !== undefined) return printCurl(options, signed, body, io);
  if (options.json) {
    const fields = { scheme: scheme.name, headers: Object.fromEntries(signed.headers), url: signed.url ?? null, ...meta(scheme, id, timestamp) };
    io.stdout.write(`${JSON.stringify({ event: "signed", ...fields })}\n`);
    return 0;
  }
  io.stdout.write(signed.headers.map(([name, value]) => `${name}: ${value}\n`).join(""));
  if (signed.url !== undefined && signed.url !== options.url)
    output.log(`send it to ${signed.url} (${scheme.name} signs this URL: the body's SHA-256 is in bodySHA256)`);
  return 0;
}

/** The id and timestamp, for a scheme that sends them: --json shows what a re-send must keep (the id) and renew (the timestamp). */
function meta(scheme: Scheme, id: string, timestamp: number): { id: string | null; timestamp: number | null } {
  return { id: scheme.id ? id : null, timestamp: scheme.timestamp ? timestamp : null };
}

/** The curl command: the signed headers and the Content-Type, the body piped in (inspector/curl.ts's builder and rules). */
function printCurl(options: SignOptions, signed: SignedRequest, body: Buffer, io: CliIo): number {
  const target = options.curl as string;
  // Twilio adds the body's hash to the URL it signs; the request must carry it too.
  const url = signed.url === undefined ? target : options.url === undefined ? signed.url : withBodyHash(target, body);
  const copy = curlOf({ method: "POST", url, headers: [["Content-Type", options.contentType], ...signed.headers], body });
  if (copy.command === null) throw new UsageError(`cannot write the request as a curl command: ${copy.problem}`, { flag: "--curl" });
  if (options.json) io.stdout.write(`${JSON.stringify({ event: "signed", scheme: options.scheme, curl: copy.command, url })}\n`);
  else io.stdout.write(`${copy.command}\n`);
  return 0;
}
