import { isCredentialHeader, REDACTED } from "../util/redact.js";
import type { AttemptEvent } from "../delivery/types.js";
import { formatDuration } from "../util/duration.js";
import type { Output } from "./output.js";

export function headerLines(headers: Record<string, string>): string[] {
  return Object.entries(headers).map(([name, value]) => `${name}: ${isCredentialHeader(name) ? REDACTED : value}`);
}

/** `--verbose` (send, replay): one attempt's request and response on stderr. */
export function logAttempt(output: Output, event: AttemptEvent): void {
  const { request } = event;
  output.log(`> ${request.method} ${request.url} (attempt ${event.attempt})`);
  for (const line of headerLines(request.headers)) output.log(`> ${line}`);
  output.log(`> ${request.body.toString("utf8")}`);
  if (event.response && event.status !== null) {
    output.log(`< ${event.status} (${formatDuration(event.ms)})`);
    for (const [name, value] of Object.entries(event.response.headers)) output.log(`< ${name}: ${Array.isArray(value) ? value.join(", ") : value}`);
    if (event.response.body !== "") output.log(`< ${event.response.body}`);
  } else {
    output.log(`< no response (${formatDuration(event.ms)}): ${event.error ?? ""}`);
  }
}
