import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { Inspection } from "../../src/inspector/inspection.js";
import { startReceiver } from "../../src/receiver/server.js";
import { closeServersAfterEach } from "../helpers/setup.js";

/** The inspector's Resend keeps a Webhooks (Actions) request's method and its signature rule. */

const SECRET = "inspector-actions-secret";
const hmac = (body: string) => createHmac("sha1", SECRET).update(body).digest("hex");
const { server } = closeServersAfterEach();
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

function post(url: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("Resend of Webhooks (Actions) requests", () => {
  it("a PUT batch goes out as a PUT with the same bytes, signed over its first element; a PATCH payload as a PATCH signed over its body", async () => {
    const target = await server();
    const inspection = new Inspection({ secret: SECRET, keep: 100 });
    const receiver = await startReceiver({ secret: SECRET, onRequest: inspection.add });
    inspection.setReceiverUrl(receiver.url);
    const page = await inspection.serve(0);
    opened.push(receiver, inspection);

    const first = '{"sku":"a","qty":1}';
    const batch = `[${first},{"sku":"b","qty":2}]`;
    const payload = '{"email":"ada@example.com"}';
    for (const [method, body, signature] of [
      ["PUT", batch, hmac(first)],
      ["PATCH", payload, hmac(payload)],
    ] as const) {
      const answer = await request(`${receiver.url}/hook`, { method, headers: { "content-type": "application/json", "x-signature": signature }, body });
      await answer.body.dump();
      expect(answer.statusCode).toBe(200);
    }

    for (const id of [1, 2]) {
      const resent = await post(`${page}/api/requests/${id}/resend`, JSON.stringify({ url: `${target.url}/again` }));
      expect(resent.status).toBe(200);
      expect(JSON.parse(resent.body)).toMatchObject({ signature: "ok", appStatus: 200 });
    }
    expect(target.requests.map((r) => [r.method, r.body.toString(), r.headers["x-signature"]])).toEqual([
      ["PUT", batch, hmac(first)],
      ["PATCH", payload, hmac(payload)],
    ]);
    expect(inspection.store.list().map((row) => [row.label, row.method])).toEqual([
      ["1", "PUT"],
      ["2", "PATCH"],
      ["R1", "PUT"],
      ["R2", "PATCH"],
    ]);
  });
});
