import { get as httpGet, request as httpRequest, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startInspectorServer, type InspectorServer } from "../../src/inspector/server.js";
import { RequestStore, type NewInspected } from "../../src/receiver/history/store.js";
import { judgeRequest } from "../../src/receiver/verdict.js";

const opened: InspectorServer[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((server) => server.close()));
});

async function inspector(keep: number, maxStreams?: number): Promise<{ store: RequestStore; url: string }> {
  // Bounded in rows only: these tests are about the streams, not the history's byte bound.
  const store = new RequestStore({ keep, maxBytes: 1024 * 1024 * 1024 });
  const server = await startInspectorServer({
    port: 0,
    store,
    secret: undefined,
    routes: null,
    receiverUrl: "http://127.0.0.1:9",
    resend: () => Promise.resolve(undefined),
    ...(maxStreams !== undefined ? { maxStreams } : {}),
  });
  opened.push(server);
  return { store, url: server.url };
}

function message(fields: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify({ version: 1, type: "track", userId: "u", event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z", ...fields }));
}

/** A row as listen adds it; rows made from one `raw` share its verdict, so thousands cost little. */
function rowMaker(raw: Buffer): (label: string) => NewInspected {
  const headers = { "content-type": "application/json" };
  const verdict = judgeRequest(raw, headers, {});
  return (label) => ({
    label,
    receivedAt: new Date(),
    method: "POST",
    path: "/hook",
    headers,
    raw,
    verdict,
    status: 200,
    fault: null,
    injected: false,
    response: null,
  });
}

function get(
  url: string,
  headers: Record<string, string> = {},
  method = "GET",
  body?: string,
): Promise<{ status: number; headers: IncomingMessage["headers"]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface StreamEvent {
  event: string;
  data: unknown;
}

/** An event stream read only once `read()` is called: until then its client stops taking bytes (backpressure). */
function lazyStream(
  url: string,
): Promise<{ read: (until: (events: StreamEvent[]) => boolean) => Promise<{ events: StreamEvent[]; ended: boolean }>; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${url}/api/events`, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`event stream answered ${res.statusCode}`));
      }
      resolve({
        close: () => req.destroy(),
        read: (until) =>
          new Promise((done) => {
            const events: StreamEvent[] = [];
            let text = "";
            const finish = (ended: boolean): void => {
              res.removeAllListeners("data");
              done({ events, ended });
            };
            res.setEncoding("utf8");
            res.on("data", (chunk: string) => {
              text += chunk;
              const parts = text.split("\n\n");
              text = parts.pop() ?? "";
              for (const part of parts) {
                const event = /^event: (.*)$/m.exec(part)?.[1];
                const data = /^data: (.*)$/m.exec(part)?.[1];
                if (event && data) events.push({ event, data: JSON.parse(data) });
              }
              if (until(events)) finish(false);
            });
            res.on("close", () => finish(true));
            res.on("error", () => finish(true));
          }),
      });
    });
    req.on("error", reject);
  });
}

/** The row ids a stream delivered, in order: hello's rows, the `rows` batches, then each `row`. */
function idsOf(events: StreamEvent[]): number[] {
  return events.flatMap(({ event, data }) => {
    if (event === "hello") return (data as { rows: { id: number }[] }).rows.map((row) => row.id);
    if (event === "rows") return (data as { id: number }[]).map((row) => row.id);
    return event === "row" ? [(data as { id: number }).id] : [];
  });
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("the inspector's API guards", () => {
  it("refuses API requests from another origin or site, allows the page's own, typed URLs and non-browser clients", async () => {
    const { store, url } = await inspector(10);
    store.add(rowMaker(message({}))("1"));
    const host = new URL(url).host;
    const refused: Record<string, string>[] = [
      { origin: "http://evil.example" },
      { origin: `http://127.0.0.1:1` },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
    ];
    const allowed: Record<string, string>[] = [
      {},
      { "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "none" },
      { origin: `http://${host}`, "sec-fetch-site": "same-origin" },
    ];
    for (const path of ["/api/download?ids=1", "/api/requests/1", "/api/events"]) {
      for (const headers of refused) {
        const answer = await get(`${url}${path}`, headers);
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(403);
        expect(JSON.parse(answer.body).error).toMatch(/refused/);
      }
    }
    for (const path of ["/api/download?ids=1", "/api/requests/1"]) {
      for (const headers of allowed) expect((await get(`${url}${path}`, headers)).status, `${path} ${JSON.stringify(headers)}`).toBe(200);
    }
    // The page and its files stay open to a top-level navigation from anywhere.
    for (const path of ["/", "/inspector.js", "/detail.js", "/dom.js", "/inspector.css"])
      expect((await get(`${url}${path}`, { "sec-fetch-site": "cross-site" })).status).toBe(200);
    // A Resend from a same-site page (another port of 127.0.0.1) carries JSON and no Origin check would stop it.
    const resend = await get(`${url}/api/requests/1/resend`, { "content-type": "application/json", "sec-fetch-site": "same-site" }, "POST", "{}");
    expect(resend.status).toBe(403);
  });

  it("answers 400 to a request-target that is no URL, and keeps serving", async () => {
    const { url } = await inspector(10);
    const { hostname, port } = new URL(url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(`GET http://[ HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n\r\n`));
      let text = "";
      socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await get(`${url}/`)).status).toBe(200);
  });
});

describe("the event stream", () => {
  it("a client that stops reading gets every row once, in order, when it reads again", async () => {
    const { store, url } = await inspector(40_000);
    // Long user and event names: each summary is about 600 bytes, so 30,000 rows fill any socket buffer.
    const row = rowMaker(message({ userId: "u".repeat(300), event: "e".repeat(300) }));
    for (let i = 1; i <= 5_000; i++) store.add(row(String(i)));
    const stream = await lazyStream(url);
    for (let i = 5_001; i <= 35_000; i++) store.add(row(String(i)));
    const { events } = await stream.read((seen) => seen.at(-1)?.event === "row" && (seen.at(-1)?.data as { id: number } | undefined)?.id === 35_000);
    stream.close();
    expect(idsOf(events)).toEqual(range(1, 35_000));
    // The snapshot went in batches of about 64 KB; later rows one by one.
    const kinds = events.map((event) => event.event);
    expect(kinds[0]).toBe("hello");
    expect(kinds.filter((kind) => kind === "rows").length).toBeGreaterThan(10);
    expect(kinds.filter((kind) => kind === "row")).toHaveLength(30_000);
  }, 30_000);

  it("a client that falls behind the rows kept is closed; what it got before has no gap", async () => {
    const { store, url } = await inspector(100);
    const row = rowMaker(message({ userId: "u".repeat(300), event: "e".repeat(300) }));
    const stream = await lazyStream(url);
    // As requests arrive: a few at a time, so what was written reaches the socket between them.
    for (let i = 1; i <= 30_000; i++) {
      store.add(row(String(i)));
      if (i % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const { events, ended } = await stream.read(() => false);
    expect(ended).toBe(true);
    const ids = idsOf(events);
    expect(ids.length).toBeGreaterThan(100);
    expect(ids).toEqual(range(1, ids.length));
    expect(ids.length).toBeLessThan(30_000);
    // Its place is free again: a new stream opens with the rows kept.
    const next = await lazyStream(url);
    const fresh = await next.read((seen) => idsOf(seen).at(-1) === 30_000);
    next.close();
    expect(idsOf(fresh.events)).toEqual(range(29_901, 30_000));
  }, 30_000);

  it("sends summaries, never a body, with long texts cut", async () => {
    const { store, url } = await inspector(10);
    store.add(rowMaker(message({ userId: `a${"😀".repeat(60_000)}`, event: "e".repeat(100_000), properties: { secret: "BODY-ONLY" } }))("1"));
    const stream = await lazyStream(url);
    const reading = stream.read((seen) => seen.some((event) => event.event === "row"));
    store.add(rowMaker(message({ event: "x".repeat(50_000), properties: { secret: "BODY-ONLY" } }))("2"));
    const { events } = await reading;
    stream.close();
    const text = JSON.stringify(events);
    expect(text).not.toContain("BODY-ONLY");
    expect(text.length).toBeLessThan(4_000);
    const [first, second] = [
      (events[0]?.data as { rows: Record<string, unknown>[] } | undefined)?.rows[0],
      events.find((event) => event.event === "row")?.data as Record<string, unknown>,
    ];
    // "a" and 127 emoji are 255 UTF-16 units: the cut at 256 would split the next pair, so it comes before it.
    expect(first?.["userId"]).toBe(`a${"😀".repeat(127)}…`);
    expect(first?.["name"]).toBe(`${"e".repeat(256)}…`);
    expect(first).not.toHaveProperty("body");
    expect(second?.["name"]).toBe(`${"x".repeat(256)}…`);
    const detail = JSON.parse((await get(`${url}/api/requests/1`)).body) as { userId: string };
    expect(detail.userId).toHaveLength(1 + 120_000);
  });

  it(`refuses a stream past the cap with 503 and a message naming it; a closed stream frees its place`, async () => {
    const { url } = await inspector(10, 2);
    const first = await lazyStream(url);
    const second = await lazyStream(url);
    const refused = await get(`${url}/api/events`);
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("3");
    expect(JSON.parse(refused.body)).toEqual({ error: expect.stringContaining("too many inspector tabs open: at most 2 live streams"), limit: 2 });
    first.close();
    const opens = async (): Promise<boolean> => {
      const stream = await lazyStream(url).catch(() => undefined);
      stream?.close();
      return stream !== undefined;
    };
    await expect.poll(opens).toBe(true);
    second.close();
  });
});

describe("Download", () => {
  it("writes each distinct kept row once, oldest first, and refuses more distinct ids than rows kept", async () => {
    const { store, url } = await inspector(3);
    for (const userId of ["a", "b", "c", "d"]) store.add(rowMaker(message({ userId }))(userId));
    // Row 1 is no longer kept.
    const answer = await get(`${url}/api/download?ids=4,2,4,4,1,2,x,,4`);
    expect(answer.status).toBe(200);
    expect(
      answer.body
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { body: { userId: string } }).body.userId),
    ).toEqual(["b", "d"]);
    const tooMany = await get(`${url}/api/download?ids=1,2,3,4`);
    expect(tooMany.status).toBe(400);
    expect(JSON.parse(tooMany.body).error).toBe("more than 3 distinct ids: the inspector keeps 3 requests (--ui-keep)");
  });

  it("answers at most 4 downloads at once; a client that stops reading holds one line, and its place frees when it leaves", async () => {
    const { store, url } = await inspector(20);
    const row = rowMaker(message({ properties: { blob: "x".repeat(1_000_000) } }));
    for (let i = 1; i <= 20; i++) store.add(row(String(i)));
    const ids = range(1, 20).join(",");
    // Clients that read the head and then nothing: 20 MB of lines cannot all be sent.
    const stalled = await Promise.all(
      range(1, 4).map(
        () =>
          new Promise<IncomingMessage>((resolve, reject) => {
            const req = httpGet(`${url}/api/download?ids=${ids}`, (res) => resolve(res));
            req.on("error", reject);
          }),
      ),
    );
    for (const res of stalled) expect(res.statusCode).toBe(200);
    const busy = await get(`${url}/api/download?ids=1`);
    expect(busy.status).toBe(503);
    expect(JSON.parse(busy.body).error).toBe("at most 4 downloads at once; try again when one ends");
    stalled[0]?.destroy();
    await expect.poll(async () => (await get(`${url}/api/download?ids=1`)).status).toBe(200);
    for (const res of stalled) res.destroy();
  });
});
