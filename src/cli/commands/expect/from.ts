import { parseHttpUrl } from "../../../config/checks.js";
import type { ErrorSource } from "../../../errors.js";

/* `--from`: the control API's URL, or the file `listen --ready-file` writes (the webhook URL, then the control URL). */

/** Whether `--from` is a URL rather than a ready file. */
export function fromIsUrl(from: string): boolean {
  return /^https?:\/\//i.test(from);
}

/** A URL `--from` gives (itself, or a ready file's line): checked, without its trailing slash. */
export function fromHref(text: string, source: ErrorSource): string {
  return parseHttpUrl(text, source).href.replace(/\/$/, "");
}

/** A ready file's first two lines, trimmed (`""` when missing): the webhook URL and the control API's. */
export function readyLines(text: string): { url: string; control: string } {
  const [url = "", control = ""] = text.split("\n").map((line) => line.trim());
  return { url, control };
}
