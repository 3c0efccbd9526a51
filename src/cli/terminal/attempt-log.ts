import { redactHeaders } from "../../safe-text/redact.js";
import type { AttemptEvent, PreparedRequest } from "../../delivery/types.js";
import { formatDuration } from "../../util/duration.js";
import { printable, printableLines } from "../../safe-text/printable.js";
import type { Output } from "./output.js";
import { detailLines } from "./invocation-lines.js";

/** A request's headers as `Name: value` lines, credentials redacted. */
function headerLines(headers: Record<string, string>): string[] {
  return Object.entries(redactHeaders(headers)).map(([name, value]) => `${name}: ${String(value)}`);
}

/** `--verbose` (send, replay): one attempt's request and response on stderr; a destination function's event and invocation. */
export function logAttempt(output: Output, event: AttemptEvent): void {
  const { request } = event;
  if (event.invocation !== undefined) {
    output.log(`> ${request.url} (attempt ${event.attempt})`);
    output.log(`> ${request.body.toString("utf8")}`);
    const answer = event.error === null ? "done" : event.error;
    output.log(`< ${event.invocation.handler ?? "(no handler)"}: ${printable(answer)} (${formatDuration(event.ms)})`);
    for (const line of detailLines(event.invocation)) output.log(`<   ${line}`);
    return;
  }
  output.log(`> ${request.method} ${request.url} (attempt ${event.attempt})`);
  for (const line of headerLines(request.headers)) output.log(`> ${line}`);
  output.log(`> ${request.body.toString("utf8")}`);
  if (event.response && event.status !== null) {
    output.log(`< ${event.status} (${formatDuration(event.ms)})`);
    for (const [name, value] of Object.entries(event.response.headers)) output.log(`< ${name}: ${printable(Array.isArray(value) ? value.join(", ") : value)}`);
    if (event.response.body !== "") output.log(`< ${printableLines(event.response.body)}`);
  } else {
    output.log(`< no response (${formatDuration(event.ms)}): ${event.error ?? ""}`);
  }
}

/** What `--dry-run` prints of one request, for `send` and `replay` alike: headers (credentials redacted) and body. */
export function printDryRun(output: Output, input: { line: number; where: string }, request: PreparedRequest): void {
  if (output.json) {
    output.event("request", {
      line: input.line,
      url: request.url,
      method: request.method,
      headers: redactHeaders(request.headers),
      body: request.body.toString("utf8"),
    });
    return;
  }
  output.line(`# ${input.where} → ${request.url}`);
  output.line(`${request.method} ${request.url}`);
  for (const line of headerLines(request.headers)) output.line(line);
  output.line("");
  output.line(request.body.toString("utf8"));
  output.line("");
}
