import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { flagOfField } from "../../src/cli/shell/field-flags.js";
import { WebhookCliError } from "../../src/errors.js";
import { ResultsFile, scanResults } from "../../src/regress/results-file.js";
import { readAnswers } from "../helpers/old-results.js";
import { ResultsOrder } from "../../src/regress/results-order.js";
import { answerOfResult, parseAnswerLine } from "../../src/regress/results-read.js";
import {
  BodyCapture,
  MAX_KEPT_BODY_BYTES,
  contentTypeOf,
  formatResultLine,
  keepBody,
  messageFacts,
  resultLine,
  type MessageOutcome,
  type ResultLine,
} from "../../src/regress/results.js";

const track = { type: "track", event: "Order Completed", userId: "user-42", messageId: "m-12", properties: { total: 10 } };

function outcome(line: number, status: number | null = 200, body = '{"ok":true}'): MessageOutcome {
  return {
    line,
    facts: messageFacts(track, "user-42"),
    delivered: status !== null && status < 300,
    urls: [
      {
        url: "http://127.0.0.1:3000/hook",
        status,
        attempts: 1,
        ms: 3.4567,
        error: status === null ? "connect ECONNREFUSED" : null,
        ...(status !== null ? { response: { contentType: "application/json", body: keepBody(body) } } : {}),
      },
    ],
  };
}

const format = (line: number, status?: number, body?: string): string => formatResultLine(resultLine(outcome(line, status, body)));

describe("results line", () => {
  it("has the documented fields, in this order", () => {
    expect(formatResultLine(resultLine(outcome(12)))).toBe(
      '{"line":12,"messageId":"m-12","type":"track","event":"Order Completed","userId":"user-42","delivered":true,' +
        '"urls":[{"url":"http://127.0.0.1:3000/hook","status":200,"attempts":1,"ms":3.46,"error":null,"contentType":"application/json","body":"{\\"ok\\":true}"}]}\n',
    );
  });

  it("leaves out messageId and event when the message has none, and the body when no answer came", () => {
    const line = resultLine({ ...outcome(3, null), facts: messageFacts({ type: "identify" }, undefined) });
    expect(line).toEqual({
      line: 3,
      type: "identify",
      userId: null,
      delivered: false,
      urls: [{ url: "http://127.0.0.1:3000/hook", status: null, attempts: 1, ms: 3.46, error: "connect ECONNREFUSED", contentType: null }],
    });
  });

  it("keeps a body under 64 KiB whole and a larger one as SHA-256 and size", () => {
    const under = "x".repeat(MAX_KEPT_BODY_BYTES - 1);
    const at = "x".repeat(MAX_KEPT_BODY_BYTES);
    expect(keepBody(under)).toEqual({ body: under });
    expect(keepBody(at)).toEqual({ bodySha256: createHash("sha256").update(at).digest("hex"), bodySize: MAX_KEPT_BODY_BYTES });
  });

  it("hashes a body that is not UTF-8 instead of mangling it", () => {
    const bytes = Uint8Array.from([0xff, 0xfe, 0x00]);
    expect(keepBody(bytes)).toEqual({ bodySha256: createHash("sha256").update(bytes).digest("hex"), bodySize: 3 });
  });

  it("captures a streamed body in chunks, hashing past the limit", () => {
    const capture = new BodyCapture();
    const chunk = Buffer.alloc(40 * 1024, 0x61);
    capture.push(chunk);
    capture.push(chunk);
    const whole = Buffer.concat([chunk, chunk]);
    expect(capture.finish()).toEqual({ bodySha256: createHash("sha256").update(whole).digest("hex"), bodySize: whole.length });
    const small = new BodyCapture();
    small.push(Buffer.from("he"));
    small.push(Buffer.from("llo"));
    expect(small.finish()).toEqual({ body: "hello" });
  });

  it("takes each URL's captured answer from the engine's result, URL by URL", () => {
    const response = { contentType: "text/plain", body: keepBody("ok") };
    const engine = {
      delivered: true,
      rounds: 1,
      interrupted: false,
      urls: [
        { url: "http://a/", status: 202, attempts: 2, error: null, ms: 5, response },
        { url: "http://b/", status: null, attempts: 2, error: "timeout", ms: 5000 },
      ],
    };
    expect(resultLine({ line: 4, facts: messageFacts({ type: "page" }, "u"), delivered: engine.delivered, urls: engine.urls }).urls).toEqual([
      { url: "http://a/", status: 202, attempts: 2, ms: 5, error: null, contentType: "text/plain", body: "ok" },
      { url: "http://b/", status: null, attempts: 2, ms: 5000, error: "timeout", contentType: null },
    ]);
  });

  it("with `redact`, masks the secret in URLs, errors and answers, and redacts credentials in URLs", () => {
    const secret = "s3cret-value";
    const urls = [
      {
        url: `http://user:pw@a/hook?token=${secret}`,
        status: 200,
        attempts: 1,
        error: null,
        ms: 1,
        response: { contentType: "text/plain", body: keepBody(`echo ${secret}`) },
      },
      { url: "http://b/", status: null, attempts: 1, error: `refused by http://b/?key=${secret}`, ms: 1 },
    ];
    const line = resultLine({ line: 1, facts: messageFacts({ type: "page" }, "u"), delivered: true, urls }, { secret });
    expect(JSON.stringify(line)).not.toContain(secret);
    expect(JSON.stringify(line)).not.toContain("user:pw");
    expect(line.urls[0]?.body).toBe("echo ***");
    // Without `redact` the line shows what it is given.
    expect(resultLine({ line: 1, facts: messageFacts({ type: "page" }, "u"), delivered: true, urls }).urls[0]?.body).toBe(`echo ${secret}`);
  });

  it("finds content-type in any case", () => {
    expect(contentTypeOf({ "Content-Type": "text/plain" })).toBe("text/plain");
    expect(contentTypeOf({ "content-type": ["a/b", "c/d"] })).toBe("a/b");
    expect(contentTypeOf({ other: "x" })).toBeNull();
    expect(contentTypeOf(undefined)).toBeNull();
  });

  it("reads back as the same answer", () => {
    const answer = answerOfResult(resultLine(outcome(12)));
    expect(answer).toEqual({
      line: 12,
      facts: { type: "track", userId: "user-42", messageId: "m-12", event: "Order Completed" },
      delivered: true,
      urls: [{ url: "http://127.0.0.1:3000/hook", status: 200, error: null, contentType: "application/json", body: { kind: "text", text: '{"ok":true}' } }],
    });
  });
});

describe("ResultsOrder", () => {
  it("releases in input order whatever the finishing order", () => {
    const order = new ResultsOrder<string>();
    for (const line of [2, 3, 5, 9]) order.admit(line);
    expect(order.finish(5, "five")).toEqual([]);
    expect(order.finish(3, "three")).toEqual([]);
    expect(order.held).toBe(2);
    expect(order.finish(2, "two")).toEqual(["two", "three", "five"]);
    expect(order.finish(9, "nine")).toEqual(["nine"]);
    expect(order.pending).toBe(0);
  });

  it("releases the lines after a dropped (interrupted) one, without it", () => {
    const order = new ResultsOrder<number>();
    for (const line of [1, 2, 3]) order.admit(line);
    expect(order.finish(2, 2)).toEqual([]);
    expect(order.drop(1)).toEqual([2]);
    expect(order.drop(3)).toEqual([]);
    expect(order.pending).toBe(0);
  });

  it("refuses out-of-order admission and unknown or repeated lines", () => {
    const order = new ResultsOrder<number>();
    order.admit(4);
    expect(() => order.admit(4)).toThrow(RangeError);
    expect(() => order.admit(2)).toThrow(RangeError);
    expect(() => order.finish(5, 5)).toThrow(RangeError);
    order.admit(6);
    order.finish(6, 6);
    expect(() => order.finish(6, 6)).toThrow(RangeError);
  });

  it("says when it holds its limit, so the sender can stop admitting", () => {
    const order = new ResultsOrder<number>(2);
    for (const line of [1, 2, 3, 4]) order.admit(line);
    order.finish(2, 2);
    expect(order.isFull).toBe(false);
    order.finish(3, 3);
    expect(order.isFull).toBe(true);
    expect(order.finish(1, 1)).toEqual([1, 2, 3]);
    expect(order.isFull).toBe(false);
  });

  it("releases everything, in order, over many lines finishing in a scrambled order", () => {
    const order = new ResultsOrder<number>();
    const lines = Array.from({ length: 5000 }, (_, i) => i * 2 + 1);
    for (const line of lines) order.admit(line);
    // A fixed permutation: stride through the lines.
    const released: number[] = [];
    for (let i = 0; i < lines.length; i++)
      released.push(...order.finish(lines[(i * 7919) % lines.length] as number, lines[(i * 7919) % lines.length] as number));
    expect(released).toEqual(lines);
  });
});

describe("ResultsFile, and reading it back for --compare", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "webhook-cli-results-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes lines in input order as they are released and appends on a second run", async () => {
    const path = join(dir, "results.ndjson");
    const file = new ResultsFile(path, { input: join(dir, "input.ndjson") });
    const order = new ResultsOrder<ResultLine>();
    for (const line of [1, 2, 3]) order.admit(line);
    file.write(order.finish(3, resultLine(outcome(3))));
    file.write(order.finish(2, resultLine(outcome(2, 500, "boom"))));
    expect(readFileSync(path, "utf8")).toBe(""); // line 1 still in flight
    file.write(order.drop(1)); // interrupted: no line, the others follow
    file.close();
    expect(
      readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).line),
    ).toEqual([2, 3]);

    const again = new ResultsFile(path);
    again.write([resultLine(outcome(1))]);
    again.close();
    const { answers } = await readAnswers(path, "results.ndjson");
    expect([...answers.keys()].sort()).toEqual([1, 2, 3]);
    expect(answers.get(2)?.urls[0]?.status).toBe(500);
  });

  it("refuses the input file as the results file, naming the flag", () => {
    const input = join(dir, "input.ndjson");
    writeFileSync(input, "");
    const error = (() => {
      try {
        new ResultsFile(input, { input });
      } catch (e) {
        return e as WebhookCliError;
      }
      return undefined;
    })();
    expect(error?.describe(flagOfField)).toMatch(/input\.ndjson: --results: the results file cannot be the input file/);
  });

  it("reads shards' files concatenated in any order, the last line for a number winning", async () => {
    const path = join(dir, "all.ndjson");
    writeFileSync(path, [format(7), "\n", format(2), format(7, 503, "later")].join(""));
    const { answers, runs } = await readAnswers(path, "all.ndjson");
    expect(runs).toBe(2);
    expect([...answers.keys()]).toEqual([2, 7]);
    expect(answers.get(7)?.urls[0]?.status).toBe(503);
  });

  it("reads a recording's responses keyed by the recording's line numbers, counting lines without one", async () => {
    const path = join(dir, "rec.ndjson");
    const envelope = { receivedAt: "2024-01-01T00:00:00.000Z", method: "POST", path: "/", headers: {}, signatureValid: true, body: track };
    writeFileSync(
      path,
      [
        JSON.stringify({ ...envelope, response: { status: 202, ms: 4, headers: { "Content-Type": "application/json" }, body: { total: 10 } } }),
        "",
        JSON.stringify(envelope),
        JSON.stringify({ ...envelope, response: { status: 200, ms: 4, headers: {}, bodySha256: "a".repeat(64), bodySize: 70000 } }),
      ].join("\n"),
    );
    const { answers, unanswered } = await readAnswers(path, "rec.ndjson");
    expect(unanswered).toBe(1);
    expect([...answers.keys()]).toEqual([1, 4]);
    expect(answers.get(1)).toMatchObject({
      delivered: true,
      facts: { userId: "user-42", event: "Order Completed" },
      urls: [{ status: 202, contentType: "application/json", body: { kind: "value", value: { total: 10 } } }],
    });
    expect(answers.get(4)?.urls[0]?.body).toEqual({ kind: "hash", sha256: "a".repeat(64), size: 70000 });
  });

  it("reads a recording's unreachable app (status null) and a body kept as bodyBase64 (compared by digest)", async () => {
    const path = join(dir, "rec-odd.ndjson");
    const envelope = { receivedAt: "2024-01-01T00:00:00.000Z", method: "POST", path: "/", headers: {}, signatureValid: true, body: track };
    const bytes = Buffer.from([0xff, 0xfe, 0x00]);
    writeFileSync(
      path,
      [
        JSON.stringify({ ...envelope, response: { status: null, ms: 3, error: "connection refused" } }),
        JSON.stringify({ ...envelope, response: { status: 200, ms: 4, headers: {}, bodyBase64: bytes.toString("base64") } }),
      ].join("\n"),
    );
    const { answers } = await readAnswers(path, "rec-odd.ndjson");
    expect(answers.get(1)).toMatchObject({ delivered: false, urls: [{ status: null, error: "connection refused", body: { kind: "none" } }] });
    expect(answers.get(2)?.urls[0]?.body).toEqual({ kind: "hash", sha256: createHash("sha256").update(bytes).digest("hex"), size: 3 });
  });

  it("names the file and line of a bad line, and refuses a file with no answers", async () => {
    const bad = join(dir, "bad.ndjson");
    writeFileSync(bad, `${format(1)}{"line":0,"urls":[]}\n`);
    const error = await scanResults(bad, "bad.ndjson").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookCliError);
    expect((error as WebhookCliError).describe()).toMatch(/^bad\.ndjson:2: not a results line: key "line"/);

    const messages = join(dir, "messages.ndjson");
    writeFileSync(messages, `${JSON.stringify(track)}\n`);
    await expect(scanResults(messages, "messages.ndjson")).rejects.toThrow(/no answers to compare with/);
  });
});

describe("parseAnswerLine", () => {
  it("says why a line is bad", () => {
    expect(parseAnswerLine("{nope", 1)).toMatch(/^not JSON/);
    expect(parseAnswerLine("[1]", 1)).toMatch(/expected a JSON object/);
    expect(parseAnswerLine('{"line":1,"urls":[{"status":99}]}', 1)).toMatch(/urls\[0\]: key "status"/);
    expect(parseAnswerLine('{"line":1,"urls":[{"status":200,"bodySha256":"xyz"}]}', 1)).toMatch(/bodySha256/);
    expect(parseAnswerLine('{"body":{},"response":{"status":"200"}}', 1)).toMatch(/response\.status/);
    expect(parseAnswerLine('{"body":{},"failure":{"reason":"x"}}', 1)).toBeUndefined();
  });
});
