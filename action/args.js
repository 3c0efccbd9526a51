// @ts-check
/**
 * The `args` input as words, split as a POSIX shell splits them but with nothing expanded or run:
 * spaces, tabs and newlines separate words; '…' keeps everything in it; "…" keeps everything but
 * a backslash before `"`, `\`, `$` or a backtick; a backslash outside quotes keeps the next
 * character. `$HOME`, `*` and `$(…)` stay as written: use `${{ … }}` expressions for values.
 * @param {string} text
 * @returns {string[]}
 */
export function splitArgs(text) {
  /** @type {string[]} */
  const words = [];
  let word = "";
  let inWord = false;
  /** @type {string | undefined} */
  let quote;
  const chars = [...text];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] ?? "";
    const next = chars[i + 1];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" && next !== undefined && '"\\$`'.includes(next)) word += chars[++i];
      else word += c;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      inWord = true;
      if (c === "'" || c === '"') quote = c;
      else if (c === "\\" && next !== undefined) word += chars[++i];
      else word += c;
    }
  }
  if (quote !== undefined) throw new Error(`input args: a ${quote === "'" ? "single" : "double"} quote is not closed`);
  if (inWord) words.push(word);
  return words;
}
