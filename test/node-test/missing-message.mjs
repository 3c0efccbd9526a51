// A node:test test that fails on purpose: test/e2e/node-test.test.ts checks that the runner's
// report shows what did arrive instead of the message it waited for.
import { after, test } from "node:test";
import { startReceiver } from "webhook-cli/testing";

const receiver = await startReceiver();
after(() => receiver.close());

test("waits for a track that never comes", async () => {
  await fetch(`${receiver.url}/hooks`, { method: "POST", body: JSON.stringify({ type: "identify", userId: "u_1", traits: {} }) });
  await receiver.waitFor({ type: "track", event: "Order Completed" }, { timeout: 200 });
});
