import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_REQUEST_BYTES } from "../../src/messages/limits.js";
import { readBody } from "../../src/http/body-reader.js";
import { BodyBudget, DEFAULT_BODY_BUDGET_BYTES, lingeringClose } from "../../src/http/limits.js";
import { contentCodingOf } from "../../src/http/inflate.js";
import { cpuMsAsync } from "../helpers/cpu-time.js";

/**
 * The body reader inflating real request streams, in the shapes the official
 * clients send: analytics-kotlin (text/plain, gzip, chunked with no
 * Content-Length, /v1/b, writeKey in the body) and analytics-python with
 * gzip=True (JSON, gzip, Content-Length). The server here is serve's wiring
 * without its queue: coding first (415), then the body read and inflated as it
 * arrives (400 when too large or corrupt, answered early with a lingering
 * close). serve's memory under bombs is measured in its own process:
 * test/e2e/inflate-memory.test.ts.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function startDecoder(): Promise<{ port: number }> {
  const answer = (req: IncomingMessage, res: ServerResponse, status: number, body: Record<string, unknown>): void => {
    if (!req.complete) lingeringClose(req, res);
    const text = JSON.stringify(body);
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
  };
  const budget = new BodyBudget(DEFAULT_BODY_BUDGET_BYTES);
  const server = createServer((req, res) => {
    const coding = contentCodingOf(req.headers["content-encoding"]);
    if (!coding.ok) return answer(req, res, 415, { success: false, message: coding.message });
    if (coding.coding === "identity") return answer(req, res, 400, { success: false, message: "this test server takes compressed bodies only" });
    const reading = readBody(
      req,
      MAX_REQUEST_BYTES,
      budget,
      {
        onBody: (raw) => {
          reading.release();
          answer(req, res, 200, { success: true, received: JSON.parse(raw.toString("utf8")) as unknown });
        },
        onTooLarge: () => answer(req, res, 400, { success: false, code: "request_too_large" }),
        onCorrupt: (message) => answer(req, res, 400, { success: false, code: "invalid_request", message }),
        onOverBudget: () => answer(req, res, 503, { success: false, code: "unavailable" }),
      },
      coding.coding,
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port };
}

/**
 * Posts `pieces` one by one (chunked unless a Content-Length is given); with
 * `more`, keeps sending it until the answer arrives, as a client still
 * uploading does.
 */
function post(port: number, path: string, headers: Record<string, string | number>, pieces: Buffer[], more?: Buffer): Promise<Answer & { sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request({ host: "127.0.0.1", port, path, method: "POST", headers }, (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown>, sent }));
    });
    req.on("error", reject);
    const pump = (): void => {
      while (!answered) {
        const piece = pieces.shift() ?? more;
        if (piece === undefined) return void req.end();
        sent += piece.length;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

const batch = {
  batch: [
    { type: "track", event: "Song Played", userId: "u1", messageId: "m1", context: { library: { name: "analytics-kotlin", version: "1.25.0" } } },
    { type: "screen", name: "Home", anonymousId: "a1", messageId: "m2", context: { library: { name: "analytics-kotlin", version: "1.25.0" } } },
  ],
  sentAt: "2024-05-01T10:00:00.000Z",
  writeKey: "wk_mobile",
};

describe("a compressed request body, as it arrives", () => {
  it("analytics-kotlin's upload: text/plain, gzip, chunked with no Content-Length", async () => {
    const { port } = await startDecoder();
    const packed = gzipSync(JSON.stringify(batch));
    // OkHttp's chunked streaming writes as the GZIPOutputStream flushes: pieces of any size.
    const pieces = [packed.subarray(0, 1), packed.subarray(1, 9), packed.subarray(9, 40), packed.subarray(40)];
    const answer = await post(port, "/v1/b", { "Content-Type": "text/plain", "Content-Encoding": "gzip", "User-Agent": "analytics-kotlin/1.25.0" }, pieces);
    expect(answer.status).toBe(200);
    expect(answer.body["received"]).toEqual(batch);
  });

  it("analytics-python with gzip=True: JSON, gzip, Content-Length", async () => {
    const { port } = await startDecoder();
    const packed = gzipSync(JSON.stringify(batch));
    const answer = await post(port, "/v1/batch", { "Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": packed.length }, [packed]);
    expect(answer).toMatchObject({ status: 200, body: { received: batch } });
  });

  it("a bomb streamed without end is answered 400 at the limit while the client is still sending", async () => {
    const { port } = await startDecoder();
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024));
    let answer: Awaited<ReturnType<typeof post>> | undefined;
    // The client never ends its body, so any answer came while it was sending; in CPU time (client and
    // server are this process), not the wall clock, it came quickly whatever else the machine runs.
    const cpu = await cpuMsAsync(async () => {
      answer = await post(port, "/v1/b", { "Content-Type": "text/plain", "Content-Encoding": "gzip" }, [], member);
    });
    expect(answer).toMatchObject({ status: 400, body: { code: "request_too_large" } });
    expect(cpu).toBeLessThan(2_000);
  });

  it("a corrupt stream is answered 400 with zlib's reason; an unknown coding 415", async () => {
    const { port } = await startDecoder();
    const corrupt = await post(port, "/v1/b", { "Content-Encoding": "gzip" }, [Buffer.from('{"batch": []}')]);
    expect(corrupt).toMatchObject({
      status: 400,
      body: { code: "invalid_request", message: "request body is not valid gzip data (Content-Encoding: gzip): incorrect header check" },
    });
    const brotli = await post(port, "/v1/b", { "Content-Encoding": "br" }, [Buffer.from("x")]);
    expect(brotli.status).toBe(415);
    expect(brotli.body["message"]).toContain('"br"');
  });
});
