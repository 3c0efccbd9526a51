import { relayedHeaders } from "../receiver/forward.js";
import { isOriginForm } from "../receiver/request-target.js";
import { isAcceptedMethod } from "../receiver/methods.js";
import { redactHeaders, REDACTED, type Secrets } from "../safe-text/redact.js";
import type { Inspected } from "../receiver/history/index.js";

/** The command, or why the request cannot be copied as one (the page says so). */
export type CurlCopy = { command: string; problem: null } | { command: null; problem: string };

/** Where the copied command sends. */
export interface CurlTarget {
  /** listen's URL (`http://127.0.0.1:8080`): the request's path is appended to it. */
  receiverUrl: string;
  /** With --forward-to, the app's URL, used as it is (the relay sends every path there). */
  forwardUrl: string | null;
}

// curl adds these itself (Content-Type with --data-binary, Expect before a large body): each one
// the command does not carry from the recording is turned off with `-H 'Name:'`.
const CURL_OWN = ["Accept", "User-Agent", "Content-Type", "Expect"];
const PRINTABLE = /^[\x20-\x7e]*$/;
// Bytes curl sends as they are in a path with -g and --path-as-is (checked with curl 7.88, and by
// the e2e test with the curl installed): printable ASCII but space, and not `#` (curl drops what
// follows it).
const PATH_BYTES = /^[\x21-\x22\x24-\x7e]*$/;

/**
 * `curl` that sends the recorded method, path, end-to-end headers and body bytes (so the signature
 * still matches) to listen's URL, or to the app's with --forward-to, and does nothing else pasted
 * into bash, zsh or fish: printable ASCII and newlines only, every recorded byte inside single
 * quotes or base64, the body always through a pipe (a `@` at its start would make curl read a
 * file), no URL globbing, no ~/.curlrc, no proxy, none of curl's own headers the recording lacks.
 * Credential headers are left out, as the page never shows them (docs/receiver.md#copy-as-curl).
 */
export function curlCommand(row: Inspected, target: CurlTarget, secret: Secrets): CurlCopy {
  // listen refused such a request (400) without forwarding it: there is nothing to send again.
  if (!isOriginForm(row.path))
    return {
      command: null,
      problem: "its request-target is not a path starting with / (listen answered 400): appended to listen's URL it would name another target",
    };
  const problem = target.forwardUrl === null ? pathProblem(row.path) : null;
  if (problem) return { command: null, problem };
  const url = target.forwardUrl ?? `${target.receiverUrl}${row.path}`;
  const data = bodyArgument(row);
  if (data !== null && typeof data === "object") return { command: null, problem: data.problem };
  return assemble(row.method, url, headerArguments(row, secret, data !== null), data, row.raw);
}

/** A request to write as a curl command: its method, absolute URL, headers in order and body bytes (null: none). */
export interface CurlRequest {
  method: string;
  url: string;
  headers: readonly (readonly [name: string, value: string])[];
  body: Buffer | null;
}

/**
 * The same safe command for a request made here (`sign --curl`): the rules of curlCommand, with
 * the headers given as they are (none is a recorded credential to leave out) and the URL whole.
 */
export function curlOf(request: CurlRequest): CurlCopy {
  const data = request.body === null ? null : request.body.length > 0 ? "--data-binary @-" : "--data-binary ''";
  return assemble(request.method, request.url, headerWords(request.headers), data, request.body ?? Buffer.alloc(0));
}

/** The command's lines, the body piped in as base64, checked once more for anything but printable ASCII. */
function assemble(httpMethod: string, url: string, headers: string[], data: string | null, raw: Buffer): CurlCopy {
  const method = httpMethod === "HEAD" ? "--head" : `-X ${shellWord(httpMethod)}`;
  const lines = [`curl -q -sS -g --path-as-is --noproxy '*' ${method} ${shellWord(url)}`, ...headers, ...(data !== null ? [data] : [])];
  const command = lines.join(" \\\n  ");
  const piped = raw.length > 0 ? `printf '%s' '${raw.toString("base64")}' | base64 --decode | ${command}` : command;
  // The rule the pieces above keep, checked once more: nothing a terminal or shell could act on.
  if (!/^[\x20-\x7e\n]*$/.test(piped)) return { command: null, problem: "it holds characters that cannot be written as printable ASCII" };
  return { command: piped, problem: null };
}

/** Why an origin-form path cannot be appended to listen's URL byte for byte, or null. */
function pathProblem(path: string): string | null {
  if (path.includes("#")) return "its path holds #: curl does not send what follows it";
  if (!PATH_BYTES.test(path)) return "its path holds bytes that curl would not send as they are";
  return null;
}

/** `--data-binary @-` (the body comes through the pipe), `--data-binary ''`, null for no body, or why the body is unknown. */
function bodyArgument(row: Inspected): string | null | { problem: string } {
  if (row.raw.length > 0) return "--data-binary @-";
  const length = row.headers["content-length"];
  const chunked = row.headers["transfer-encoding"] !== undefined;
  // listen answers other methods than POST, PUT and PATCH (405) and bodies over its limit (413) without reading them.
  const unread = !isAcceptedMethod(row.method) || row.status === 413;
  if ((length !== undefined && length !== "0") || (chunked && unread)) {
    return { problem: "listen answered it without reading its body, so the bytes to send are not known" };
  }
  // An empty body that was announced (Content-Length: 0) is sent as one; HEAD carries none.
  return (length !== undefined || chunked) && row.method !== "HEAD" ? "--data-binary ''" : null;
}

/** One `-H` per recorded end-to-end header, then the switches that turn off curl's own headers. */
function headerArguments(row: Inspected, secret: Secrets, withBody: boolean): string[] {
  const flat: string[] = [];
  for (const [name, value] of Object.entries(row.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) flat.push(name, one);
  }
  // Hop-by-hop headers describe the sender's connection; curl sets Host and Content-Length itself.
  const kept = new Set(relayedHeaders(flat).filter((_, i) => i % 2 === 0));
  const expect = row.headers["expect"];
  if (expect !== undefined && withBody) kept.add("expect");
  const shown = redactHeaders(Object.fromEntries(Object.entries(row.headers).filter(([name]) => kept.has(name))), secret);
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(shown)) {
    if (value === REDACTED) continue;
    for (const one of Array.isArray(value) ? value : [value]) pairs.push([name, one]);
  }
  return headerWords(pairs);
}

/** One `-H` per header, then the switches that turn off curl's own headers the request does not carry. */
function headerWords(headers: readonly (readonly [string, string])[]): string[] {
  const args = headers.map(([name, value]) => `-H ${headerWord(name, value)}`);
  const sent = new Set(headers.map(([name]) => name.toLowerCase()));
  const off = CURL_OWN.filter((name) => !sent.has(name.toLowerCase())).map((name) => `-H '${name}:'`);
  return off.length > 0 ? [...args, off.join(" ")] : args;
}

/**
 * `-H`'s argument: `Name: value`, or `Name;` for an empty value (`Name:` would remove the header).
 * A line with bytes outside printable ASCII (a tab, Latin-1 bytes) is decoded from base64 by a
 * command substitution, which bash, zsh and fish (3.4 or later) write alike inside double quotes.
 */
function headerWord(name: string, value: string): string {
  const line = value === "" ? `${name};` : `${name}: ${value}`;
  if (PRINTABLE.test(line)) return shellWord(line);
  // node:http gives header bytes as Latin-1 characters, one per byte.
  return `"$(printf '%s' '${Buffer.from(line, "latin1").toString("base64")}' | base64 --decode)"`;
}

/**
 * One shell word holding `text` (printable ASCII) for bash, zsh and fish alike: single quotes,
 * except `'` and `\` (which fish reads as escapes inside single quotes), written as `"'"` and
 * `"\\"`; inside double quotes those mean the same in all three shells.
 */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(text)) return text;
  if (text === "") return "''";
  return text
    .split(/([\\']+)/)
    .filter((part) => part !== "")
    .map((part) => (/^[\\']/.test(part) ? `"${part.replaceAll("\\", "\\\\")}"` : `'${part}'`))
    .join("");
}
