import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DeliveryResult } from "../../src/delivery/types.js";
import { parseEntry, type ReplayEntry } from "../../src/replay/envelope.js";
import { ResultsSink } from "../../src/regress/results-sink.js";

const dir = mkdtempSync(join(tmpdir(), "results-sink-"));

function entry(line: number): ReplayEntry {
  const text = JSON.stringify({
    version: 1,
    type: "track",
    userId: `u${line}`,
    event: "E",
    messageId: `m-${line}`,
    properties: {},
    timestamp: "2024-01-01T00:00:00.000Z",
  });
  const result = parseEntry(text, line, true);
  if (!result.ok) throw new Error(result.reason);
  return result.entry;
}

const answered = (status: number, body: string): DeliveryResult => ({
  delivered: status < 300,
  rounds: 1,
  interrupted: false,
  urls: [
    {
      url: "http://user:pw@127.0.0.1:1/hook",
      status,
      attempts: 1,
      error: status < 300 ? null : `HTTP ${status}`,
      ms: 1.234,
      response: { contentType: "text/plain", body: { body } },
    },
  ],
});

describe("ResultsSink", () => {
  it("writes in input order as lines finish, leaves out interrupted ones, and never writes URL credentials", () => {
    const path = join(dir, "order.ndjson");
    const released: number[] = [];
    const sink = new ResultsSink({ path, input: join(dir, "input.ndjson") }, (lines) => released.push(...lines.map((l) => l.line)));
    const [a, b, c] = [entry(1), entry(2), entry(5)] as [ReplayEntry, ReplayEntry, ReplayEntry];
    for (const e of [a, b, c]) sink.admit(e);
    sink.finished(c, answered(200, "five"));
    sink.finished(b, { ...answered(200, "two"), interrupted: true, delivered: false });
    expect(released).toEqual([]);
    expect(readFileSync(path, "utf8")).toBe("");
    sink.finished(a, answered(500, "one"));
    sink.close();
    expect(released).toEqual([1, 5]);
    const lines = readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { line: number; messageId: string; urls: { url: string; body: string; ms: number }[] });
    expect(lines.map((l) => [l.line, l.messageId, l.urls[0]?.body])).toEqual([
      [1, "m-1", "one"],
      [5, "m-5", "five"],
    ]);
    expect(lines[0]?.urls[0]?.url).toBe("http://user:***@127.0.0.1:1/hook");
    expect(lines[0]?.urls[0]?.ms).toBe(1.23);
  });

  it("masks through the one redaction: userinfo, credential query values, and the secret in URLs, errors and answers", () => {
    const path = join(dir, "masked.ndjson");
    const secret = "hush-hush-1";
    const sink = new ResultsSink({ path, input: join(dir, "input.ndjson"), secret }, undefined);
    const one = entry(1);
    sink.admit(one);
    const result = answered(500, `echo ${secret}`);
    const [url] = result.urls as [DeliveryResult["urls"][number]];
    sink.finished(one, { ...result, urls: [{ ...url, url: `http://user:pw@127.0.0.1:1/h/${secret}?api_key=k-987&x=1`, error: `HTTP 500 from /h/${secret}` }] });
    sink.close();
    const text = readFileSync(path, "utf8");
    expect(text).toContain('"url":"http://user:***@127.0.0.1:1/h/***?api_key=***&x=1"');
    expect(text).toContain('"error":"HTTP 500 from /h/***"');
    expect(text).toContain('"body":"echo ***"');
    expect(text).not.toMatch(/hush-hush-1|k-987|:pw@/);
  });

  it("holds the reader back while too many results wait for an earlier line, and lets go on a stop", async () => {
    const sink = new ResultsSink({ input: join(dir, "input.ndjson") }, () => {}, 1);
    const [a, b, c] = [entry(1), entry(2), entry(3)] as [ReplayEntry, ReplayEntry, ReplayEntry];
    for (const e of [a, b]) sink.admit(e);
    sink.finished(b, answered(200, "two"));
    let roomy = false;
    const waiting = sink.waitForRoom(undefined).then(() => (roomy = true));
    await Promise.resolve();
    expect(roomy).toBe(false);
    sink.finished(a, answered(200, "one"));
    await waiting;
    expect(roomy).toBe(true);

    sink.admit(c);
    sink.admit(entry(4));
    sink.finished(entry(4), answered(200, "four"));
    const stop = new AbortController();
    const stopped = sink.waitForRoom(stop.signal);
    stop.abort();
    await expect(stopped).resolves.toBeUndefined();
  });
});
