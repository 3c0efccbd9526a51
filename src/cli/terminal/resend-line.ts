import type { Inspected } from "../../receiver/history/index.js";
import { formatDuration } from "../../util/duration.js";
import type { Output } from "./output.js";

/** `↻ R1 resend of #3 → http://localhost:3000/webhook  200  12ms` (or a `resend` JSON event): listen's `r` and page, and inspect's page. */
export function reportResend(row: Inspected, output: Output): void {
  const response = row.response;
  const fields = {
    label: row.label,
    of: row.resend?.ofLabel,
    url: row.resend?.url,
    edited: row.resend?.edited === true,
    status: response?.status ?? null,
    ms: response?.ms ?? 0,
    error: response?.error ?? null,
  };
  output.event("resend", fields);
  const outcome = fields.status !== null && fields.error === null ? String(fields.status) : `${fields.status ?? "no answer"}: ${fields.error ?? ""}`;
  const what = fields.edited ? "edited resend" : "resend";
  output.line(`↻ ${fields.label} ${what} of #${fields.of ?? "?"} → ${fields.url ?? ""}  ${outcome}  ${formatDuration(fields.ms)}`);
}
