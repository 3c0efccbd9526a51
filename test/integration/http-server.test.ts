import { afterEach, describe, expect, it } from "vitest";
import { flagOfField } from "../../src/cli/shell/field-flags.js";
import { PortError, type WebhookCliError } from "../../src/errors.js";
import { startInspectorServer } from "../../src/inspector/server.js";
import { RequestStore } from "../../src/receiver/history/store.js";
import { startReceiver } from "../../src/receiver/server.js";
import { Collector } from "../../src/serve/collector.js";
import { MemoryQueue } from "../../src/serve/queue/memory-queue.js";
import { listenCollector } from "../../src/serve/server.js";
import { startServer, type TestServer } from "../helpers/http-server.js";

const opened: (TestServer | Collector)[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((item) => item.close()));
});

async function refusal(start: Promise<unknown>): Promise<WebhookCliError> {
  const error = await start.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PortError);
  return error as WebhookCliError;
}

describe("the one HTTP server helper (http/server.ts)", () => {
  it("listen's receiver, serve and the inspector word a port in use the same way", async () => {
    const busy = await startServer();
    opened.push(busy);
    const expected = `cannot listen on 127.0.0.1:${busy.port}: the port is already in use (EADDRINUSE)`;

    const receiver = await refusal(startReceiver({ port: busy.port }));
    expect(receiver.describe(flagOfField)).toBe(expected);

    const collector = new Collector({
      settings: { targets: [], secret: undefined, secrets: [], userAgent: "u", aliasKeys: "spec", enabled: true, sources: [] },
      queue: new MemoryQueue(),
      delivery: {},
      concurrency: 1,
      strict: false,
    });
    opened.push(collector);
    const serve = await refusal(listenCollector(collector, { host: "127.0.0.1", port: busy.port }));
    expect(serve.describe(flagOfField)).toBe(expected);

    const options = {
      port: busy.port,
      store: new RequestStore({ keep: 1 }),
      secret: undefined,
      routes: null,
      receiverUrl: "http://127.0.0.1:9",
      resend: () => Promise.resolve(undefined),
    };
    const inspector = await refusal(startInspectorServer(options));
    // The inspector's port comes from its own flag, which the message names.
    expect(inspector.describe(flagOfField)).toBe(`--ui-port: ${expected}`);
  });
});
