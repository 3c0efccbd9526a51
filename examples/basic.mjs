// A runnable example of the client library. Inside this repository, after `npm run build`:
//   webhook-cli serve &            (a local collection service on http://127.0.0.1:8088)
//   node examples/basic.mjs
// ANALYTICS_ENDPOINT and ANALYTICS_WRITE_KEY override the defaults; DEBUG=analytics logs what happens.
import { Analytics } from "webhook-cli";

const analytics = new Analytics(process.env.ANALYTICS_WRITE_KEY ?? "my-write-key", {
  endpoint: process.env.ANALYTICS_ENDPOINT ?? "http://127.0.0.1:8088",
  flushAt: 20, // send a batch as soon as 20 calls are queued...
  flushAfter: 5000, // ...or 5 s after the last flush, whichever comes first
});

// Delivery problems never throw: they arrive here (and in each call's callback).
analytics.on("error", (error) => console.error(`not delivered: ${error.message}`));
analytics.on("flush", (batch) => console.log(`delivered a batch of ${batch.messageIds.length} (HTTP ${batch.status})`));

analytics.identify({ userId: "u_42", traits: { name: "Ada", plan: "pro" } });
analytics.track({ userId: "u_42", event: "Order Completed", properties: { revenue: 42.5, currency: "EUR" } });
analytics.page({ userId: "u_42", name: "Checkout", properties: { path: "/checkout", title: "Checkout" } });
analytics.group({ userId: "u_42", groupId: "acme", traits: { employees: 120 } });
analytics.alias({ userId: "u_42", previousId: "anon_7f3c" }, (error) => {
  console.log(error ? `alias failed: ${error.message}` : "alias delivered");
});

try {
  analytics.track({ userId: "u_42" }); // no event name
} catch (error) {
  console.log(`rejected at once: ${error.message}`); // You must pass 'event'.
}

// Messages live in memory only: close() sends what is queued and waits for the answers.
await analytics.close();
