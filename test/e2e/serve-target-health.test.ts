import { describe, expect, it } from "vitest";
import { jsonEvents, startInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach } from "../helpers/setup.js";

// serve says when deliveries to a URL start failing and when they recover (docs/serve-api.md#output);
// the rate limit is timing, tested in virtual time (test/unit/target-health.test.ts).
const { server } = closeServersAfterEach();

async function ingest(serveUrl: string, count: number): Promise<void> {
  const batch = Array.from({ length: count }, (_, i) => ({ type: "track", userId: `u${i}`, event: "Order Completed" }));
  const answer = await fetch(`${serveUrl}/v1/batch`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Basic ${Buffer.from("key:").toString("base64")}` },
    body: JSON.stringify({ batch }),
  });
  expect(answer.status).toBe(200);
}

describe("serve: a URL failing, then recovering", () => {
  it("20 messages to a receiver that answers 503, then 200: one line when it starts failing, one when it recovers", async () => {
    let down = true;
    const app = await server((_request, res) => {
      res.writeHead(down ? 503 : 200);
      res.end();
    });
    const hook = `${app.url}/hook`;
    const serve = startInProcess(["serve", "--port", "0", "--memory", "--write-key", "key", "--url", hook, "--secret", "s3cret"]);
    const [, url] = await serve.waitFor(/Listening on (\S+)/, 15_000);
    await ingest(url as string, 20);
    await serve.waitForStderr(/! deliveries to \S+ are failing/, 30_000);
    down = false;
    await serve.waitForStderr(/✓ deliveries to \S+ recovered/, 30_000);
    serve.stop("SIGINT");
    const result = await serve.done;
    const lines = result.stderr.split("\n").filter((line) => line.includes("deliveries to"));
    expect(lines).toEqual([
      `! deliveries to ${hook} are failing: HTTP 503 (retrying)`,
      expect.stringMatching(new RegExp(`^✓ deliveries to ${hook.replaceAll(".", "\\.")} recovered after \\d+(\\.\\d)?m?s \\(\\d+ failed attempts?\\)$`)),
    ]);
    expect(result.code).toBe(0);
  }, 60_000);

  it("--json: the same as target events", async () => {
    let down = true;
    const app = await server((_request, res) => {
      res.writeHead(down ? 429 : 200, { "content-type": "application/json" });
      res.end(down ? '{"error":"slow down"}' : "{}");
    });
    const hook = `${app.url}/hook`;
    const serve = startInProcess(["serve", "--port", "0", "--memory", "--write-key", "key", "--url", hook, "--json"]);
    const [, url] = await serve.waitFor(/"url":"([^"]+)"/, 15_000);
    await ingest(url as string, 3);
    await serve.waitFor(/"event":"target","state":"failing"/, 30_000);
    down = false;
    await serve.waitFor(/"event":"target","state":"recovered"/, 30_000);
    serve.stop("SIGINT");
    const targets = jsonEvents((await serve.done).stdout, "target");
    expect(targets).toEqual([
      { event: "target", state: "failing", url: hook, error: 'HTTP 429: {"error":"slow down"}' },
      { event: "target", state: "recovered", url: hook, failedAttempts: expect.any(Number), downMs: expect.any(Number) },
    ]);
  }, 60_000);
});
