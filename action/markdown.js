// @ts-check
// Text a sender chose (paths, user ids, event names, reasons) as inert Markdown: whatever a
// request holds, it reads as the same characters in the job summary and never becomes a link,
// an image, HTML, emphasis, a mention or a new table cell or row.

const MAX_CELL = 120;

/** Control, zero-width and direction-changing characters, shown as escapes rather than acted on. */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;
/** @type {Record<string, string>} */
const NAMED = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `value` for a table cell: clipped to `max` characters, every occurrence of `secret` replaced by
 * `***`, invisible characters spelled out, `&`, `<` and `>` as entities and every other ASCII
 * punctuation character backslash-escaped (CommonMark lets any be; GFM tables take `\|` as text).
 * @param {unknown} value
 * @param {{ secret?: string, max?: number }} [options]
 */
export function cell(value, { secret, max = MAX_CELL } = {}) {
  if (value === null || value === undefined || value === "") return "—";
  let text = String(value);
  if (secret) text = text.split(secret).join("***");
  const chars = [...text];
  if (chars.length > max) text = `${chars.slice(0, max).join("")}…`;
  return text
    .replace(INVISIBLE, (c) => NAMED[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`)
    .replace(/[!-/:-@[-`{-~]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : `\\${c}`));
}

/**
 * A GFM table: `align` per column (`l` or `r`; none by default). Every cell given must already be escaped.
 * @param {string[]} headers
 * @param {string[][]} rows
 * @param {string[]} [align]
 */
export function table(headers, rows, align = []) {
  const line = (/** @type {string[]} */ cells) => `| ${cells.join(" | ")} |`;
  const rule = (/** @type {number} */ i) => (align[i] === "r" ? "--:" : align[i] === "l" ? ":--" : "---");
  return [line(headers), line(headers.map((_, i) => rule(i))), ...rows.map(line)].join("\n");
}

/** `1 request`, `2 requests`. @param {number} count @param {string} word @param {string} [words] */
export function plural(count, word, words = `${word}s`) {
  return `${count} ${count === 1 ? word : words}`;
}
