import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { Inspection } from "../../src/inspector/inspection.js";
import { startReceiver } from "../../src/receiver/server.js";
import { SCHEME_NAMES, type SchemeName } from "../../src/signing/schemes.js";
import type { ReceivedRequest } from "../helpers/http-server.js";
import { ANY_SCHEME_SECRET, ID_HEADER, ownerSigned, ownerVerifies, TIMESTAMPED, timestampOf, twilioUrl } from "../helpers/scheme-judges.js";
import { closeServersAfterEach } from "../helpers/setup.js";

// The inspector's Resend and edit-then-resend sign again by the row's scheme (a fresh timestamp,
// the row's message id); copy-as-curl carries the row's headers. Each scheme's owner judges.
const { server } = closeServersAfterEach();
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});
const BODY = Buffer.from(JSON.stringify({ version: 1, type: "track", userId: "user_1", event: "Order Completed", timestamp: "2024-01-01T00:00:00.000Z" }));
// Signed 200 s ago: within the 300 s tolerances when it arrives; a copy of it sent again would not be, for long.
const SIGNED_AT = Math.floor(Date.now() / 1000) - 200;

function post(url: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** listen's receiver and inspection recognising every scheme, with one owner-signed request of `scheme` received. */
async function received(scheme: SchemeName): Promise<{ page: string; headers: Record<string, string> }> {
  const inspection = new Inspection({ signing: { secrets: [ANY_SCHEME_SECRET] }, keep: 100 });
  const receiver = await startReceiver({ secrets: [ANY_SCHEME_SECRET], onRequest: inspection.add });
  inspection.setReceiverUrl(receiver.url);
  const page = await inspection.serve(0);
  opened.push(receiver, inspection);
  const url = scheme === "twilio" ? twilioUrl(`${receiver.url}/hook`, BODY) : `${receiver.url}/hook`;
  const headers = await ownerSigned(scheme, ANY_SCHEME_SECRET, BODY, { url, timestamp: SIGNED_AT });
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: BODY });
  expect(answer.status).toBe(200);
  return { page, headers };
}

describe("Resend signs again by the row's scheme", () => {
  it.each(SCHEME_NAMES)("%s: the owner verifies the resend and the edited resend; the id stays, the timestamp is fresh", async (scheme) => {
    const target = await server();
    const { page, headers } = await received(scheme);
    const resent = await post(`${page}/api/requests/1/resend`, JSON.stringify({ url: `${target.url}/again` }));
    expect(resent.status).toBe(200);
    expect(resent.json).toMatchObject({ signature: "ok", scheme, appStatus: 200 });
    const edited = BODY.toString().replace("Order Completed", "Order Refunded");
    const editedResend = await post(`${page}/api/requests/1/resend`, JSON.stringify({ url: `${target.url}/again`, body: edited }));
    expect(editedResend.json).toMatchObject({ signature: "ok", scheme, resendEdited: true });
    const [first, second] = target.requests as [ReceivedRequest, ReceivedRequest];
    expect(first.body.equals(BODY)).toBe(true);
    expect(second.body.toString()).toBe(edited);
    for (const request of [first, second]) {
      expect(await ownerVerifies(scheme, ANY_SCHEME_SECRET, { headers: request.headers, body: request.body, url: `${target.url}${request.url}` })).toBe(true);
      const header = ID_HEADER[scheme];
      if (header !== undefined) expect(request.headers[header]).toBe(headers[header]);
      if (TIMESTAMPED.includes(scheme)) expect(timestampOf(scheme, request.headers)).toBeGreaterThanOrEqual(SIGNED_AT + 200);
      // One signature header: the recorded one is not carried beside the fresh one.
      expect(Object.keys(request.headers).filter((name) => /signature|hmac/.test(name))).toHaveLength(1);
    }
  });

  it("copy as curl carries the row's signature headers as received", async () => {
    const { page, headers } = await received("standard");
    const detail = (await (await fetch(`${page}/api/requests/1`)).json()) as { curl: string };
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) expect(detail.curl).toContain(`${name}: ${headers[name]}`);
  });
});
