import { resolve } from "node:path";
import { resolveSecrets } from "../../../config/secret.js";
import { UsageError, type ErrorSource } from "../../../errors.js";
import { describeSkew, requestVerifier, type NotRecognised, type Verification, type Verified } from "../../../signing/index.js";
import { readBodyInput } from "../../shared/body-input.js";
import { checkFullUrl } from "../../shared/full-url.js";
import { interruptedExitCode, type CliIo } from "../../terminal/io.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { INTERRUPTED } from "../../shared/stdin.js";
import type { VerifyFlags } from "./options.js";
import { MAX_SETTINGS_FILE_BYTES, readRegularFile } from "../../../util/readable-file.js";

export type VerifyOptions = VerifyFlags & { file?: string | undefined };

/**
 * `verify` (docs/commands/verify.md): the one verifier on a request given by hand. Exit 0 when every
 * scheme checked verifies (the one named, or each recognised by the headers), 1 when one does not
 * (with the reason), 2 for bad input.
 */
export async function verify(options: VerifyOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json });
  const secrets = resolveSecrets({ secrets: options.secrets, secretFiles: options.secretFiles, cwd: io.cwd, env: io.env });
  if (secrets.length === 0) throw new UsageError("give the secret to verify with: --secret, --secret-file or $WEBHOOK_SECRET", { flag: "--secret" });
  const headers = parseHeaders(options.headers ?? [], io.cwd);
  if (options.url !== undefined) checkFullUrl(options.url, "--url", "the full http:// or https:// URL the sender used");
  const toleranceSeconds = options.toleranceMs === undefined ? undefined : options.toleranceMs / 1000;
  const verifier = requestVerifier({ scheme: options.scheme, secrets, toleranceSeconds });
  const body = await readBodyInput(options.file, io, output, "to verify");
  if (body === INTERRUPTED) return interruptedExitCode(io.signal);
  const verdicts = verifier({ headers, body, url: options.url, now: options.now?.getTime() ?? Date.now() });
  for (const verdict of verdicts) report(output, verdict, secrets.length);
  return verdicts.every((verdict) => verdict.ok) ? 0 : 1;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * `--header 'Name: value'` values (and `@FILE`: one per line, as curl reads `-H @FILE`, so `sign`'s
 * output can be handed back) as node:http gives headers: lower-case names, repeats joined by `, `.
 */
function parseHeaders(values: readonly string[], cwd: string): Record<string, string> {
  if (values.length === 0) throw new UsageError("give the request's headers: --header 'Name: value' (repeatable), or --header @FILE", { flag: "--header" });
  const headers: Record<string, string> = {};
  for (const value of values) {
    if (!value.startsWith("@")) {
      addHeader(headers, value, { flag: "--header" });
      continue;
    }
    const file = value.slice(1);
    // A file of headers, read as every file an option names is (docs/security.md#files-named-by-options).
    const lines = readRegularFile(resolve(cwd, file), { flag: "--header", file }, MAX_SETTINGS_FILE_BYTES).toString("latin1").split(/\r?\n/);
    lines.forEach((line, index) => {
      if (line.trim() !== "") addHeader(headers, line, { flag: "--header", file, line: index + 1 });
    });
  }
  return headers;
}

function addHeader(headers: Record<string, string>, line: string, source: ErrorSource): void {
  const colon = line.indexOf(":");
  const name = colon === -1 ? "" : line.slice(0, colon).trim();
  if (!TOKEN.test(name)) throw new UsageError(`expected 'Name: value', got ${JSON.stringify(line)}`, source);
  const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "");
  const key = name.toLowerCase();
  headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
}

function report(output: Output, verdict: Verification | NotRecognised, secrets: number): void {
  if (verdict.ok) {
    const { scheme, header, id, timestamp, skewSeconds } = verdict;
    output.event("verification", {
      verified: true,
      scheme,
      header,
      secret: verdict.secretIndex + 1,
      id: id ?? null,
      timestamp: timestamp ?? null,
      skewSeconds: skewSeconds ?? null,
    });
    output.line(`verified: ${verdict.scheme} (${verdict.header})${secretNote(verdict, secrets)}${metaNote(verdict)}`);
    return;
  }
  const { ok: _ok, ...refusal } = verdict;
  output.event("verification", { verified: false, ...refusal });
  output.line(`not verified: ${verdict.scheme === null ? "" : `${verdict.scheme}: `}${verdict.message}`);
}

function secretNote(verdict: Verified, secrets: number): string {
  return secrets > 1 ? ` with secret ${verdict.secretIndex + 1} of ${secrets}` : "";
}

/** `; id msg_1; timestamp 1700000000, 3 s old`: what a receiver deduplicates by, and the clock skew. */
function metaNote(verdict: Verified): string {
  const id = verdict.id === undefined ? "" : `; id ${verdict.id}`;
  if (verdict.timestamp === undefined || verdict.skewSeconds === undefined) return id;
  return `${id}; timestamp ${verdict.timestamp}, ${describeSkew(verdict.skewSeconds)}`;
}
