/*
 * Finds the URLs in a line of text, in time linear in its length whatever it holds.
 *
 * A URL is what this regular expression matches, scanning left to right:
 *   /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+|\/[^\s"'<>?]*\?[^\s"'<>]+/gi
 * (a `scheme://…`, or a `/path?query`). The expression itself backtracks: on a long run of
 * letters it retries the scheme from every position, which is quadratic. Here the text is cut
 * into words (runs of characters other than whitespace, quotes and angle brackets). A URL never
 * crosses a word's end and always runs to it, so a word holds at most one URL: from the leftmost
 * position where either form can start to the word's end. Only words holding "://" or "?" can
 * hold one, and each of them is read a fixed number of times.
 */

/** `text` with each URL in it replaced by `replace(url)`; the rest byte for byte. */
export function replaceUrls(text: string, replace: (url: string) => string): string {
  let out = "";
  let copied = 0;
  // The next "://" and "?" at or after `from`. Each search starts past the previous one's result,
  // so the text is searched once for each.
  let scheme = -2;
  let query = -2;
  for (let from = 0; from < text.length; ) {
    if (scheme !== -1 && scheme < from) scheme = text.indexOf("://", from);
    if (query !== -1 && query < from) query = text.indexOf("?", from);
    const anchor = scheme === -1 ? query : query === -1 ? scheme : Math.min(scheme, query);
    if (anchor === -1) break;
    // `from` is a word's end (or 0), so the word of the anchor starts at or after it.
    let start = anchor;
    while (start > from && !endsWord(text.charCodeAt(start - 1))) start--;
    let end = anchor + 1;
    while (end < text.length && !endsWord(text.charCodeAt(end))) end++;
    const url = urlStart(text, start, end);
    if (url !== -1) {
      out += text.slice(copied, url) + replace(text.slice(url, end));
      copied = end;
    }
    from = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Where the URL in the word text[start, end) begins, or -1. A `scheme://` form starts at the first
 * letter of the run of scheme characters right before a "://" that has something after it; a
 * `/path?query` form at the word's first "/", when the first "?" after it has something after it.
 */
function urlStart(text: string, start: number, end: number): number {
  let slash = -1;
  let runLetter = -1;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (isSchemeChar(code)) {
      if (runLetter === -1 && isLetter(code)) runLetter = i;
      continue;
    }
    if (code === COLON && runLetter !== -1 && i + 3 < end && text.charCodeAt(i + 1) === SLASH && text.charCodeAt(i + 2) === SLASH) {
      // The first scheme form found is the leftmost; a "/" seen before it starts earlier.
      return slash !== -1 && queryFollows(text, slash, end) ? slash : runLetter;
    }
    runLetter = -1;
    if (code === SLASH && slash === -1) slash = i;
  }
  return slash !== -1 && queryFollows(text, slash, end) ? slash : -1;
}

/** The first "?" after `slash` in the word is not its last character. */
function queryFollows(text: string, slash: number, end: number): boolean {
  for (let i = slash + 1; i < end; i++) if (text.charCodeAt(i) === QUESTION) return i < end - 1;
  return false;
}

const COLON = 58;
const SLASH = 47;
const QUESTION = 63;

function isLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/** Letters, digits, "+", "-", ".". */
function isSchemeChar(code: number): boolean {
  return isLetter(code) || (code >= 48 && code <= 57) || code === 43 || code === 45 || code === 46;
}

/** `[\s"'<>]`: JavaScript's whitespace, quotes and angle brackets. */
function endsWord(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 160) return code === 34 || code === 39 || code === 60 || code === 62;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}
