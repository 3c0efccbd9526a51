import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";
import { describe, expect, it } from "vitest";
import { splitArgs } from "../../action/args.js";
import type { Run } from "../../action/events.js";
import { cell, table } from "../../action/markdown.js";
import { failures, summaryMarkdown } from "../../action/summary.js";

// The GitHub Action's job summary (action/summary.js, action/markdown.js) rendered as GitHub
// renders Markdown (GFM: tables, autolinks, raw HTML let through here, before any sanitizer), so
// what a hostile request can do to the summary is judged on the HTML, not on our own escaping.
const render = (markdown: string): string => micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });

/** The text of an HTML fragment with no tags in it: entities decoded. */
function textOf(html: string): string {
  expect(html).not.toMatch(/<|>/);
  return html
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** The cells of a one-column table's body, as rendered. */
function bodyCells(markdown: string): string[] {
  const html = render(markdown);
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(html)?.[1] ?? "";
  return [...body.matchAll(/<td(?: align="\w+")?>([\s\S]*?)<\/td>/g)].map((match) => match[1] ?? "");
}

const HOSTILE = [
  "<img src=x onerror=alert(1)>",
  "<script>alert(1)</script>",
  "</td></tr></table><h1>owned</h1>",
  "a | b | c",
  "**bold** _em_ ~~gone~~ `code`",
  "[a link](https://evil.example) ![an image](https://evil.example/x.png)",
  "https://evil.example/path and www.evil.example and user@evil.example",
  "<https://evil.example>",
  "&lt;b&gt; &amp; &#60;script&#62;",
  "# heading",
  "- [ ] task",
  "> quote",
  "back\\slash \\| \\*",
  "[^1] footnote",
  "a\\",
];

describe("a received text in the job summary", () => {
  for (const text of HOSTILE) {
    it(`reads as itself, in one cell, with no tag, link or emphasis: ${JSON.stringify(text)}`, () => {
      const cells = bodyCells(table(["value"], [[cell(text, { max: 500 })]]));
      expect(cells).toHaveLength(1);
      expect(textOf(cells[0] ?? "")).toBe(text);
    });
  }

  it("newlines, control and direction-changing characters are spelled out, on one row", () => {
    const text = "line1\nline2\r\n| next row |\u202eevil\u200b\u0007\u0000";
    const cells = bodyCells(table(["value"], [[cell(text, { max: 500 })]]));
    expect(cells).toHaveLength(1);
    expect(textOf(cells[0] ?? "")).toBe("line1\\nline2\\r\\n| next row |\\u202eevil\\u200b\\u0007\\u0000");
  });

  it("is clipped, and the secret never shows, even across the clip", () => {
    expect(textOf(bodyCells(table(["v"], [[cell("x".repeat(300))]]))[0] ?? "")).toBe(`${"x".repeat(120)}…`);
    const secret = "s3cret-value";
    const shown = cell(`before ${secret} after ${secret}`, { secret });
    expect(shown).not.toContain("s3cret");
    expect(textOf(bodyCells(table(["v"], [[shown]]))[0] ?? "")).toBe("before *** after ***");
  });
});

const SECRET = "hunter2-secret";
const summaryEvent = { event: "summary", received: 3, valid: 1, invalid: 2, stoppedBy: "signal", exitCode: 1 };

function listenRun(): Run {
  const hostile = { method: "POST", path: `/hook?<b>x</b>`, type: "track", userId: `<img src=x> ${SECRET}`, eventName: "| **x** |", valid: false };
  return {
    listening: undefined,
    summary: summaryEvent,
    byType: new Map([
      ["track", { valid: 1, invalid: 1 }],
      ["<i>type</i>", { valid: 0, invalid: 1 }],
    ]),
    invalid: [
      { event: "request", index: 2, label: "track", ...hostile, problem: "X-Signature does not match the body", diagnosis: `signed with ${SECRET}?` },
      { event: "request", index: 3, label: "<i>type</i>", ...hostile, problem: 'missing required key "<x>"' },
    ],
    valid: [{ event: "request", index: 1, label: "track", method: "POST", path: "/hook", userId: "u1", eventName: "Signed Up", valid: true, status: 200 }],
    problems: [],
    unreadable: 0,
    requests: 3,
  };
}

describe("the job summary of a listen run", () => {
  it("lists the reasons, counts by type, the invalid requests first; only our own tags render", () => {
    const run = listenRun();
    const reasons = failures(run, "listen", { expectCount: 5, failOnInvalid: true });
    expect(reasons).toEqual(["2 requests were invalid (fail-on-invalid)", "3 requests arrived; expect-count is 5"]);
    const markdown = summaryMarkdown(run, "listen", reasons, SECRET);
    expect(markdown).not.toContain(SECRET);
    const html = render(markdown);
    expect(html).not.toContain(SECRET);
    const tags = new Set([...html.matchAll(/<\/?([a-z0-9]+)/g)].map((match) => match[1]));
    expect([...tags].sort()).toEqual(["details", "h3", "h4", "li", "strong", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul"]);
    expect(html.indexOf("Invalid requests")).toBeLessThan(html.indexOf("Valid requests"));
    expect(html).toContain("X-Signature does not match the body (likely cause: signed with ***?)");
    // Every row of the invalid requests' table has its six cells: nothing a sender wrote split one.
    const invalidTable = html.slice(html.indexOf("Invalid requests"), html.indexOf("<details>"));
    const rows = [...invalidTable.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1);
    expect(rows.map((row) => (row[1]?.match(/<td[ >]/g) ?? []).length)).toEqual([6, 6]);
  });

  it("passes with every request valid and expect-count met; fail-on-invalid false lets invalid ones pass", () => {
    const run = listenRun();
    expect(failures(run, "listen", { expectCount: 3, failOnInvalid: false })).toEqual([]);
    expect(failures({ ...run, summary: { ...summaryEvent, valid: 3, invalid: 0, exitCode: 0 } }, "listen", { expectCount: 3, failOnInvalid: true })).toEqual(
      [],
    );
  });

  it("fails when listen's --exit-after came before its --count, and when there is no summary at all", () => {
    const early = { ...listenRun(), summary: { ...summaryEvent, invalid: 0, stoppedBy: "exit-after", exitCode: 1 } };
    expect(failures(early, "listen", { expectCount: 0, failOnInvalid: true })).toEqual(["listen's --exit-after came before its --count"]);
    expect(failures({ ...listenRun(), summary: undefined }, "listen", { expectCount: 0, failOnInvalid: false })).toEqual([
      "webhook-cli listen stopped without its summary (it was killed or crashed): see its log above",
    ]);
  });
});

describe("the job summary of a serve run", () => {
  const summary = { event: "summary", accepted: 4, rejected: 1, filtered: 0, delivered: 3, retrying: 0, failed: 1, pending: 0 };
  const run: Run = {
    listening: undefined,
    summary: { ...summary, routes: { "/v1/b": 2 }, libraries: { "analytics-node": 2 }, unauthorized: { "curl/8 <b>": 1 } },
    byType: new Map(),
    invalid: [],
    valid: [],
    problems: [
      { event: "rejected", index: 1, reason: "missing <type>", source: "default", path: "/v1/b" },
      { event: "unauthorized", path: "/v1/t", client: "curl/8 <b>", reason: "unknown write key" },
      { event: "delivery", type: "track", userId: "u1", urls: [{ url: "http://127.0.0.1:9/hook", status: 500, attempts: 3 }] },
    ],
    unreadable: 0,
    requests: 0,
  };

  it("fails for the rejected and refused calls, a message given up, and too few calls", () => {
    expect(failures(run, "serve", { expectCount: 5, failOnInvalid: true })).toEqual([
      "2 calls were rejected or refused (fail-on-invalid)",
      "4 calls accepted; expect-count is 5",
      "serve gave up on 1 message",
    ]);
    expect(failures(run, "serve", { expectCount: 1, failOnInvalid: false })).toEqual(["serve gave up on 1 message"]);
  });

  it("shows the counts, the clients and each refusal with its reason, escaped", () => {
    const html = render(summaryMarkdown(run, "serve", [], ""));
    expect(html).not.toMatch(/<b>|<type>/);
    expect(html).toContain("missing &lt;type&gt;");
    expect(html).toContain("http://127.0.0.1:9/hook 500 after 3 attempts");
    expect(html).toContain('<td align="left">analytics-node</td>');
  });
});

describe("the args input", () => {
  it("splits as a shell would, expanding nothing", () => {
    expect(splitArgs(" --record  received.ndjson\n--responses 'rules file.json' --respond-body \"say \\\"hi\\\" \\$HOME\" $HOME a\\ b ''")).toEqual([
      "--record",
      "received.ndjson",
      "--responses",
      "rules file.json",
      "--respond-body",
      'say "hi" $HOME',
      "$HOME",
      "a b",
      "",
    ]);
    expect(splitArgs("")).toEqual([]);
  });

  it("refuses a quote left open, naming the input", () => {
    expect(() => splitArgs("--respond-body 'oops")).toThrow("input args: a single quote is not closed");
    expect(() => splitArgs('--respond-body "oops')).toThrow("input args: a double quote is not closed");
  });
});
