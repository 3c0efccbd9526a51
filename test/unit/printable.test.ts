import { describe, expect, it } from "vitest";
import { jsonTerminalSafe, printable, printableLines, terminalSafe } from "../../src/safe-text/printable.js";
import { cpuMs } from "../helpers/cpu-time.js";

// What a sender can put in a userId, a path or a body to command a terminal.
const HOSTILE = [
  "\x1b[2J\x1b[H", // clear the screen
  "\x1b]0;pwned\x07", // set the window title
  "\x1b]52;c;ZWNobyBoaQ==\x07", // write the clipboard (OSC 52)
  "\x9b31m", // C1 CSI
  "\x7f\x00\x08\x0d", // DEL, NUL, backspace, carriage return
  "\u202eevil\u202c", // right-to-left override
];
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe("printable", () => {
  it("shows every control character escaped, newlines included, and leaves ordinary text alone", () => {
    for (const text of HOSTILE) expect(printable(`u${text}`)).not.toMatch(CONTROL);
    expect(printable("a\nb")).toBe("a\\nb");
    expect(printable("\x1b[2J")).toBe("\\e[2J");
    expect(printable("\x9b")).toBe("\\x9b");
    expect(printable("\u202e")).toBe("\\u{202e}");
    expect(printable("user_42 ✓ café")).toBe("user_42 ✓ café");
  });

  it("printableLines keeps newlines, escapes the rest", () => {
    expect(printableLines("a\n\x1b[2Jb\r\n")).toBe("a\n\\e[2Jb\\r\n");
  });

  it("terminalSafe lets colour codes and newlines through, nothing else", () => {
    const coloured = "\x1b[32mok\x1b[39m\nnext";
    expect(terminalSafe(coloured)).toBe(coloured);
    expect(terminalSafe("\x1b]52;c;eA==\x07")).toBe("\\e]52;c;eA==\\x07");
    expect(terminalSafe("\x1b[2J")).toBe("\\e[2J");
  });

  it("jsonTerminalSafe writes DEL, C1 and bidi controls as \\u escapes: the same JSON value", () => {
    const value = { userId: "\x9b2J\x7f\u202e" };
    const json = jsonTerminalSafe(JSON.stringify(value));
    expect(json).not.toMatch(CONTROL);
    expect(JSON.parse(json)).toEqual(value);
  });

  it("runs in linear time on long hostile input", () => {
    const long = "\x1b[".repeat(100_000) + "1".repeat(100_000);
    expect(
      cpuMs(() => {
        terminalSafe(long);
        printable(long);
      }),
    ).toBeLessThan(1_000);
  });
});
