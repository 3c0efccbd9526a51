// startReceiver from node:test, as a project using the package writes it: no globals, plain ESM.
// Run by test/e2e/node-test.test.ts as `node --test`; needs the built package (npm run build).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Analytics, createDeliveryEngine } from "webhook-cli";
import { startReceiver } from "webhook-cli/testing";

const BIN = fileURLToPath(new URL("../../bin/webhook-cli.js", import.meta.url));
const SECRET = "node-test-secret";
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "webhook-cli-node-test-"));

let receiver;
let serve;

/** `webhook-cli serve` in the background, forwarding to the receiver; resolves with its URL. */
async function startServe(url) {
  const ready = join(dir, "serve.url");
  serve = execFile(process.execPath, [BIN, "serve", "--port", "0", "--memory", "--url", url, "--secret", SECRET, "--ready-file", ready]);
  for (let i = 0; i < 200; i++) {
    try {
      return readFileSync(ready, "utf8").split("\n")[0];
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  throw new Error("serve did not start");
}

before(async () => {
  receiver = await startReceiver({ secret: SECRET });
});

after(async () => {
  serve?.kill("SIGINT");
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => receiver.reset());

test("webhook-cli send reaches the receiver, signed", async () => {
  await run(process.execPath, [
    BIN,
    "send",
    "--type",
    "track",
    "--event",
    "Order Completed",
    "--user-id",
    "u_42",
    "--url",
    `${receiver.url}/hooks`,
    "--secret",
    SECRET,
  ]);
  const [order] = await receiver.waitFor({ type: "track", event: "Order Completed", userId: "u_42" });
  assert.equal(order.verdict.signatureValid, true);
  assert.equal(order.message.userId, "u_42");
});

test("the delivery engine's message, answered by a per-test rule", async () => {
  receiver.respondWith([{ match: { type: "identify" }, respond: { status: 202, body: "queued" } }]);
  const engine = await createDeliveryEngine({ targets: [`${receiver.url}/engine`], secret: SECRET, retryWindowMs: 0 });
  const message = { version: 1, type: "identify", userId: "u_7", traits: {}, timestamp: new Date().toISOString() };
  const result = await engine.deliver(JSON.stringify(message));
  await engine.close();
  assert.equal(result.urls[0].status, 202);
  const [identify] = await receiver.waitFor({ type: "identify", path: "/engine" });
  assert.equal(identify.rule, 0);
});

test("the Analytics client's calls, through webhook-cli serve", async () => {
  const endpoint = await startServe(`${receiver.url}/segment`);
  const analytics = new Analytics("write-key", { endpoint, flushAt: 1 });
  analytics.track({ userId: "u_9", event: "Signed Up" });
  await analytics.close();
  const [track] = await receiver.waitFor({ type: "track", userId: "u_9" }, { timeout: "10s" });
  assert.equal(track.path, "/segment");
  assert.equal(track.valid, true);
});

test("a missing message rejects with what arrived", async () => {
  await run(process.execPath, [BIN, "send", "--type", "page", "--user-id", "u_1", "--url", `${receiver.url}/hooks`, "--secret", SECRET]);
  await assert.rejects(receiver.waitFor({ type: "track" }, { timeout: 200 }), {
    message:
      /^waitFor: timed out after 200 ms: 0 of 1 request matching \{type: "track"\} with a valid verdict\.\n1 request arrived: 1 page \(valid\)\n {2}#1 POST \/hooks {2}page {2}u_1 {2}valid {2}→ 200$/,
  });
});
