import { resolve } from "node:path";
import { UsageError, type ErrorSource } from "../errors.js";
import { MAX_SETTINGS_FILE_BYTES, readRegularFile } from "../util/readable-file.js";
import { redactUrl } from "../safe-text/redact.js";

/** Checks of the destination's values, from flags or the config file: static headers, URLs, the User-Agent, CA files. */

// Headers that would break framing, signing or the message itself.
const REFUSED_HEADERS = new Set([
  "content-type",
  "x-signature",
  "content-length",
  "host",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// What HTTP allows in a field value: tab, visible ASCII and space, obs-text (Latin-1); no control characters.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Checks one static header, naming it and where it came from when refused. */
export function validateHeader(name: string, value: string, source: ErrorSource): void {
  if (!TOKEN.test(name)) throw new UsageError(`header name "${name}" is not a valid HTTP token`, source);
  if (REFUSED_HEADERS.has(name.toLowerCase())) {
    throw new UsageError(`header "${name}" cannot be set: webhook-cli sets it itself`, source);
  }
  if (!HEADER_VALUE.test(value)) {
    throw new UsageError(`header "${name}" has a value with control characters (CR/LF, NUL…) or characters outside Latin-1`, source);
  }
}

// What a scripted answer may not set: node:http frames the answer itself (docs/receiver.md#scripted-answers).
const REFUSED_ANSWER_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "trailer"]);

/** Checks one header of a scripted answer (listen --respond-header, --responses): as a static header, but Content-Type may be set. */
export function validateAnswerHeader(name: string, value: string, source: ErrorSource): void {
  if (!TOKEN.test(name)) throw new UsageError(`header name "${name}" is not a valid HTTP token`, source);
  if (REFUSED_ANSWER_HEADERS.has(name.toLowerCase())) throw new UsageError(`header "${name}" cannot be set: listen frames its answers itself`, source);
  if (!HEADER_VALUE.test(value)) {
    throw new UsageError(`header "${name}" has a value with control characters (CR/LF, NUL…) or characters outside Latin-1`, source);
  }
}

/** Parses `Name: value` (from `--header`). */
export function parseHeaderFlag(text: string, field = "headers", validate: typeof validateHeader = validateHeader): [string, string] {
  const colon = text.indexOf(":");
  if (colon <= 0) throw new UsageError(`"${text}" is not of the form 'Name: value'`, { field });
  const name = text.slice(0, colon).trim();
  const value = text.slice(colon + 1).trim();
  validate(name, value, { field });
  return [name, value];
}

/** Parses an absolute http: or https: URL; the errors show it with any password masked. */
export function parseHttpUrl(url: string, source: ErrorSource): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`"${redactUrl(url)}" is not a valid URL (include http:// or https://)`, source);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`"${redactUrl(url)}" is not an http: or https: URL`, source);
  }
  return parsed;
}

/** What to do instead of user:password@ in a URL we send to (--url, the config's webhooks). */
const CREDENTIALS_AS_HEADER = "pass them as a header instead, e.g. --header 'Authorization: Basic …'";

/**
 * Checks a webhook URL: absolute, http or https, and no credentials in it; `instead` says what to
 * do with them (docs/security.md: a URL is printed wherever it goes, so credentials in it are refused).
 */
export function validateUrl(url: string, source: ErrorSource, instead = CREDENTIALS_AS_HEADER): string {
  const parsed = parseHttpUrl(url, source);
  if (parsed.username !== "" || parsed.password !== "") {
    throw new UsageError(`"${redactUrl(url)}" has credentials in it (user:password@): ${instead}`, source);
  }
  return url;
}

/** Checks a User-Agent given by flag or config (a header value). */
export function validateUserAgent(value: string, source: ErrorSource): string {
  if (!HEADER_VALUE.test(value)) throw new UsageError("the User-Agent has control characters (CR/LF, NUL…) or characters outside Latin-1", source);
  return value;
}

/** Reads `--ca` files (PEM), naming the file when one is unreadable or not a certificate. */
export function readCaFiles(files: readonly string[], cwd: string): string[] {
  return files.map((file) => {
    const text = readRegularFile(resolve(cwd, file), { field: "ca", file }, MAX_SETTINGS_FILE_BYTES).toString("utf8");
    if (!text.includes("-----BEGIN CERTIFICATE-----")) throw new UsageError("not a PEM certificate (no BEGIN CERTIFICATE block)", { field: "ca", file });
    return text;
  });
}
