/**
 * Received text on a terminal. A sender chooses userIds, paths, bodies and
 * answers; written raw, their control characters are commands to the user's
 * terminal (clear the screen, set the title, write the clipboard with OSC 52,
 * fake a line with a newline) and bidi overrides reorder what is read. Pure.
 */

// C0 (with TAB and LF), DEL, C1, and the bidi embeddings, overrides and isolates.
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_NEWLINE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_NEWLINE_ONE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
// Our own colours (chalk's SGR codes), or one unsafe character other than a newline.
const COLOUR_OR_UNSAFE = /\x1b\[[0-9;]*m|[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
// The same in a JSON text: JSON.stringify escapes C0 itself; DEL, C1 and bidi controls it leaves raw.
const RAW_IN_JSON = /[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const RAW_IN_JSON_ALL = /[\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x1b": "\\e" };

function escaped(char: string): string {
  const code = char.charCodeAt(0);
  return NAMED[char] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`);
}

/** One received field (a userId, a path, a reason) as a single line of visible text: `\e[2J`, `\n`, `\x9b`. */
export function printable(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escaped) : text;
}

/** Received text of several lines (a body): the same, but newlines stay newlines. */
export function printableLines(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_BUT_NEWLINE, escaped) : text;
}

/**
 * The last guard before a human line reaches the terminal: every control
 * character but newlines and colour codes is shown escaped. Fields a sender
 * chose are escaped before they are painted (printable), so this catches
 * whatever a code path forgot; colour codes are all it lets through.
 */
export function terminalSafe(text: string): string {
  // Newlines pass: listen writes many lines at once, and an ordinary block holds nothing else to escape.
  if (!UNSAFE_BUT_NEWLINE_ONE.test(text)) return text;
  return text.replace(COLOUR_OR_UNSAFE, (match) => (match.length > 1 ? match : escaped(match)));
}

/** A JSON text with DEL, C1 and bidi controls written as \u escapes: the same value, safe on a terminal. */
export function jsonTerminalSafe(json: string): string {
  return RAW_IN_JSON.test(json) ? json.replace(RAW_IN_JSON_ALL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`) : json;
}
