import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { AnswerPlan } from "../../src/receiver/answer-plan.js";
import { RecordingFile } from "../../src/receiver/record.js";
import { startReceiver, type Receiver } from "../../src/receiver/server.js";
import { judgeRequest } from "../../src/receiver/verdict.js";
import { startInProcess } from "../helpers/run-cli.js";
import { slowUpload, trickle } from "../helpers/slow-upload.js";

const track = JSON.stringify({ version: 1, type: "track", userId: "u1", event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
const receivers: Receiver[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-receiver-failures-"));
  dirs.push(dir);
  return dir;
};

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: response.statusCode, text: await response.body.text() };
}

describe("a request never stops the receiver", () => {
  it("an error while handling one request answers it 500, records its raw bytes, and the next is answered", async () => {
    const dir = tempDir();
    const recording = RecordingFile.open(join(dir, "rec.ndjson"));
    class Broken extends AnswerPlan {
      calls = 0;
      override next(signatureOk: boolean) {
        if (++this.calls === 1) throw new Error("boom");
        return super.next(signatureOk);
      }
    }
    const errors: string[] = [];
    const receiver = await startReceiver({ port: 0, answerPlan: new Broken(), recording, onError: (error) => errors.push(error.message) });
    receivers.push(receiver);
    expect((await post(`${receiver.url}/a`, track)).status).toBe(500);
    expect((await post(`${receiver.url}/b`, track)).status).toBe(200);
    recording.close();
    const lines = readFileSync(join(dir, "rec.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l["path"])).toEqual(["/a", "/b"]);
    expect(Buffer.from(lines[0]?.["rawBody"] as string, "base64").toString()).toBe(track);
    expect(errors).toEqual(["boom"]);
  });
});

describe("recording on a full disk", () => {
  it("listen --record /dev/full answers 507 and keeps running", async () => {
    const listen = startInProcess(["listen", "--port", "0", "--record", "/dev/full"]);
    const [, url] = await listen.waitFor(/Listening on (http\S+)/);
    const first = await post(`${url}/hook`, track);
    expect(first.status).toBe(507);
    expect(first.text).toContain("ENOSPC");
    expect((await post(`${url}/hook`, track)).status).toBe(507);
    listen.stop("SIGTERM");
    const result = await listen.done;
    expect(result.stderr).toContain("ENOSPC");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("a write failing part way takes the partial line back: the file holds whole lines only", () => {
    const dir = tempDir();
    const path = join(dir, "rec.ndjson");
    writeFileSync(path, '{"earlier":true}\n');
    let calls = 0;
    const fillsUp = (fd: number, buffer: Uint8Array, offset: number, length: number): number => {
      if (++calls === 1) return writeSync(fd, buffer, offset, Math.floor(length / 2));
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    };
    const recording = RecordingFile.open(path, fillsUp);
    expect(() => recording.append('{"a":1}\n{"b":2}\n')).toThrow(/ENOSPC/);
    recording.close();
    expect(readFileSync(path, "utf8")).toBe('{"earlier":true}\n');
  });
});

describe("bounded work per request", () => {
  it("past the body budget a large upload gets 503 at once, while small requests still pass", async () => {
    const receiver = await startReceiver({ port: 0, bodyBudgetBytes: 200_000 });
    receivers.push(receiver);
    const first = await slowUpload(receiver.url, "/a", 300_000);
    await trickle(first.socket, 150_000, 3, 10);
    const second = await slowUpload(receiver.url, "/b", 300_000);
    await trickle(second.socket, 100_000, 2, 10);
    await expect.poll(() => second.received()).not.toBe("");
    expect(second.received()).toMatch(/^HTTP\/1\.1 503 /);
    // Named, and with a Retry-After, as a relayed answer over the same budget is.
    expect(second.received()).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(second.received()).toContain(`{"error":"too many request bodies in progress (listen's 200000 bytes budget for bodies in memory): retry later"}`);
    expect(first.received()).toBe("");
    expect((await post(`${receiver.url}/c`, track)).status).toBe(200);
    // An upload cut off gives its bytes back: a body that would not fit beside the first one's 150 KB passes once it is gone.
    const large = JSON.stringify({ pad: "x".repeat(120_000) });
    expect((await post(`${receiver.url}/d`, large)).status).toBe(503);
    first.socket.destroy();
    second.socket.destroy();
    await expect.poll(async () => (await post(`${receiver.url}/e`, large)).status).toBe(200);
  });

  it("a request whose body stops arriving is ended after the request timeout (408), not held for minutes", async () => {
    const receiver = await startReceiver({ port: 0, headersTimeoutMs: 500, requestTimeoutMs: 1_000 });
    receivers.push(receiver);
    const stalled = await slowUpload(receiver.url, "/a", 10_000);
    await trickle(stalled.socket, 100, 1, 0);
    await stalled.ended;
    // Node checks the timeouts every 2 s (connectionsCheckingInterval), so this comes 1 to 3 s after the
    // request started; held until Node's default request timeout (300 s), the test would time out instead.
    expect(stalled.received()).toMatch(/^HTTP\/1\.1 408 /);
    stalled.socket.destroy();
  });

  it("a wrong signature is diagnosed on bodies up to 64 KB only", () => {
    const secret = "s";
    const small = Buffer.from(JSON.stringify({ pad: "x".repeat(1_000) }));
    const large = Buffer.from(JSON.stringify({ pad: "x".repeat(70_000) }));
    const sha256 = (body: Buffer) => createHmac("sha256", secret).update(body).digest("hex");
    expect(judgeRequest(small, { "x-signature": sha256(small) }, { secret }).diagnosis?.cause).toBe("sha256");
    const verdict = judgeRequest(large, { "x-signature": sha256(large) }, { secret });
    expect(verdict.signatureValid).toBe(false);
    expect(verdict.diagnosis).toBeNull();
  });
});
