/** `text` cut to `max` characters with `…` after it, as a copy: V8's slice() shares, and so keeps alive, the whole string it was cut from. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${Buffer.from(text.slice(0, max), "utf16le").toString("utf16le")}…`;
}
