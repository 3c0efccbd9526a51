import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sign } from "../../src/signing/x-signature.js";
import { markdownFiles } from "../helpers/markdown.js";
import { startInProcess } from "../helpers/run-cli.js";

// What the docs say makes listen exit 1 for a request's method is what listen does: it takes
// POST, PUT and PATCH (docs/receiver.md#answers), so no page may say "not a POST".
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FILES = ["README.md", ...markdownFiles(join(ROOT, "docs")).map((file) => relative(ROOT, file))];
const BODY = readFileSync(join(ROOT, "fixtures/track.json"));

describe("the methods listen takes, as done and as documented", () => {
  it("POST, PUT and PATCH signed are valid (exit 0); another method makes the run invalid (exit 1)", async () => {
    for (const [methods, code] of [
      [["POST", "PUT", "PATCH"], 0],
      [["POST", "DELETE"], 1],
    ] as const) {
      const listen = startInProcess(["listen", "--port", "0", "--secret", "s3cret", "--count", String(methods.length)]);
      const [, url] = await listen.waitFor(/Listening on (\S+)/);
      for (const method of methods) {
        await fetch(`${url}/hook`, { method, headers: { "content-type": "application/json", "x-signature": sign("s3cret", BODY) }, body: BODY });
      }
      expect((await listen.done).code).toBe(code);
    }
  });

  it("no page says listen refuses what is not a POST; where one names the methods it takes, they are POST, PUT and PATCH", () => {
    const found: string[] = [];
    for (const file of FILES) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const match of text.matchAll(/not a POST|non-POST|only POST/gi)) found.push(`${file}: "${match[0]}"`);
      for (const match of text.matchAll(/a method other than (`[^;)|]*)/g)) {
        const named = [...(match[1] as string).matchAll(/`([A-Z]+)`/g)].map((method) => method[1]);
        if (named.join() !== "POST,PUT,PATCH") found.push(`${file}: "${match[0]}"`);
      }
    }
    expect(found).toEqual([]);
  });
});
