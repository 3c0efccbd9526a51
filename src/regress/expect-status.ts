import { UsageError } from "../errors.js";

/**
 * `--expect-status LIST`: `2xx`, `200,202`, `2xx,404`. An answer whose status
 * is outside the list is a failure even when it counts as delivered.
 */
export interface ExpectedStatuses {
  /** The list as given, for messages. */
  text: string;
  test(status: number): boolean;
}

export function parseExpectStatus(text: string, field = "expectStatus"): ExpectedStatuses {
  const classes = new Set<number>();
  const exact = new Set<number>();
  const items = text.split(",").map((item) => item.trim());
  for (const item of items) {
    const range = /^([1-5])xx$/i.exec(item);
    if (range) {
      classes.add(Number(range[1]));
    } else if (/^\d{3}$/.test(item) && Number(item) >= 100 && Number(item) <= 599) {
      exact.add(Number(item));
    } else {
      const what = item === "" ? "an empty entry" : `"${item}"`;
      throw new UsageError(`invalid status ${what} in "${text}": expected statuses 100–599 or classes like 2xx, separated by commas`, { field });
    }
  }
  return { text: items.join(","), test: (status) => exact.has(status) || classes.has(Math.floor(status / 100)) };
}

/**
 * The answers outside the list, one text per URL (`http://…: 200 not in 202`).
 * URLs with no answer are delivery failures already and are not repeated here.
 */
export function unexpectedStatuses(urls: readonly { url?: string | undefined; status: number | null }[], expected: ExpectedStatuses): string[] {
  const out: string[] = [];
  for (const url of urls) {
    if (url.status === null || expected.test(url.status)) continue;
    out.push(`${url.url !== undefined && urls.length > 1 ? `${url.url}: ` : ""}status ${url.status} not in ${expected.text}`);
  }
  return out;
}
