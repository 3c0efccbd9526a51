import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Analytics, sign } from "../../src/index.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { startInProcess } from "../helpers/run-cli.js";

// The client against the real consumer of its batches: `webhook-cli serve`, run in process.
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("Analytics → webhook-cli serve → webhook", () => {
  it("serve accepts the client's batches with its write key and forwards each call, signed", async () => {
    const hook: TestServer = await startServer();
    cleanups.push(() => hook.close());
    const dir = mkdtempSync(join(tmpdir(), "client-serve-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, "webhook-cli.json");
    writeFileSync(
      config,
      JSON.stringify({ sharedSecret: "s3cret", webhooks: [{ url: `${hook.url}/hook` }], sources: [{ name: "web", writeKey: "wk_serve" }] }),
    );
    const serve = startInProcess(["serve", "--port", "0", "--config", config, "--state", join(dir, "state")], { cwd: dir });
    cleanups.push(async () => {
      serve.stop("SIGTERM");
      await serve.done;
    });
    const [, url] = await serve.waitFor(/Listening on (\S+)/);

    const wrongKey = new Analytics("wk_wrong", { endpoint: url!, log: () => {} });
    let rejected: Error | undefined;
    wrongKey.identify({ userId: "u" }, (error) => (rejected = error));
    await wrongKey.close();
    expect(rejected?.message).toMatch(/HTTP 401/);

    const analytics = new Analytics("wk_serve", { endpoint: url! });
    const results: (Error | undefined)[] = [];
    analytics.track({ userId: "u1", event: "Clicked", properties: { n: 1 } }, (error) => results.push(error));
    analytics.alias({ userId: "u2", previousId: "u1" }, (error) => results.push(error));
    await analytics.close();
    expect(results).toEqual([undefined, undefined]);

    await expect.poll(() => hook.requests.length, { message: "two forwarded webhooks" }).toBe(2);
    const bodies = hook.requests.map((r) => JSON.parse(r.body.toString()) as Record<string, unknown>);
    const track = bodies.find((b) => b.type === "track");
    const alias = bodies.find((b) => b.type === "alias");
    expect(track).toMatchObject({ version: 1, type: "track", userId: "u1", event: "Clicked", properties: { n: 1 } });
    expect(alias).toMatchObject({ version: 1, type: "alias", "Previous ID": "u1", "User ID": "u2" });
    for (const request of hook.requests) expect(request.headers["x-signature"]).toBe(sign("s3cret", request.body));
  });
});
