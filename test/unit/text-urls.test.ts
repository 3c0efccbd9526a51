import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/util/clock.js";
import { replaceUrls } from "../../src/safe-text/text-urls.js";

// What a URL in running text was defined as: the scanner must find exactly its matches.
const URL_PATTERN = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+|\/[^\s"'<>?]*\?[^\s"'<>]+/gi;
const ALPHABET = [
  "a",
  "Z",
  "h",
  "1",
  "+",
  ".",
  "-",
  ":",
  "/",
  "?",
  "=",
  "&",
  "@",
  "#",
  " ",
  "\t",
  "\n",
  '"',
  "'",
  "<",
  ">",
  "\u00a0",
  "\u2028",
  "é",
  "ſ",
  "://",
  "http://",
  "/x?",
];

const mark = (url: string): string => `[${url}]`;

describe("the URLs in a line of text", () => {
  it("are exactly the ones the regular expression matched, on random text", () => {
    const random = seededRandom(21);
    for (let i = 0; i < 30_000; i++) {
      let text = "";
      const length = Math.floor(random() * 24);
      for (let j = 0; j < length; j++) text += ALPHABET[Math.floor(random() * ALPHABET.length)];
      expect(replaceUrls(text, mark), JSON.stringify(text)).toBe(text.replace(URL_PATTERN, mark));
    }
  });

  it("are found in the usual shapes of log lines", () => {
    const lines = [
      "POST https://u:p@example.com/hook?token=abc&x=1 → 503 (retry in 2s)",
      '{"url":"http://127.0.0.1:3000/x?sig=1","error":"ECONNREFUSED"}',
      "see <https://example.com/a?b=c> and 'http://h/?k=v'",
      "/plain/path?query=1 and /no-query and ?lone and a?b and 12ab://x and http:// alone",
      "",
      "nothing here",
    ];
    for (const line of lines) expect(replaceUrls(line, mark)).toBe(line.replace(URL_PATTERN, mark));
    expect(replaceUrls("at /hook?token=t, then", mark)).toBe("at [/hook?token=t,] then");
  });
});
