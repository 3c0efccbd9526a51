import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Analytics } from "@segment/analytics-node";
import { afterAll, describe, expect, it } from "vitest";
import { collect, spawnCli, waitForLine } from "../helpers/cli.js";
import { killChildrenAfterEach } from "../helpers/setup.js";

/**
 * The real @segment/analytics-node, as a server-side app uses it, sending
 * through the built `serve` with its default flags to a `listen`: a flush of
 * 20,000 tracks opens about 1,300 connections at once. Every call arrives once,
 * and no request of the client fails at the socket (a reset makes the client
 * retry for many seconds, and may deliver an event twice).
 */

const dir = mkdtempSync(join(tmpdir(), "webhook-cli-analytics-node-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const children = killChildrenAfterEach();
const TRACKS = 20_000;

async function start(args: string[]): Promise<{ url: string; done: ReturnType<typeof collect> }> {
  const child = spawnCli(args, { cwd: dir });
  children.push(child);
  const done = collect(child, 170_000);
  const [, url] = await waitForLine(child, /Listening on (http\S+)/, 15_000);
  return { url: url as string, done };
}

describe("@segment/analytics-node through serve (default flags) to listen", { tags: ["smoke"] }, () => {
  it("every call, 20,000 tracks included, arrives exactly once, and no request fails at the socket", { timeout: 180_000 }, async () => {
    const recording = join(dir, "received.ndjson");
    const listen = await start(["listen", "--port", "0", "--secret", "s3cret", "--record", recording]);
    const serve = await start([
      "serve",
      "--port",
      "0",
      "--state",
      join(dir, "state"),
      "--write-key",
      "wk_node",
      "--url",
      `${listen.url}/hook`,
      "--secret",
      "s3cret",
    ]);

    const socketFailures: string[] = [];
    const statuses = new Map<number, number>();
    const analytics = new Analytics({
      writeKey: "wk_node",
      host: serve.url,
      // The client's own fetch, watched: a failure at the socket throws here, whatever the client then retries.
      httpClient: async (url, init) => {
        try {
          const response = await fetch(url, init);
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          return response;
        } catch (error) {
          socketFailures.push(String((error as Error & { cause?: { code?: string } }).cause?.code ?? error));
          throw error;
        }
      },
    });
    const sent: string[] = [];
    const id = (kind: string, n: number) => {
      const messageId = `${kind}-${n}`;
      sent.push(messageId);
      return messageId;
    };
    analytics.identify({ userId: "u1", traits: { plan: "pro" }, messageId: id("identify", 0) });
    analytics.page({ userId: "u1", name: "Home", messageId: id("page", 0) });
    analytics.screen({ userId: "u1", name: "Main", messageId: id("screen", 0) });
    analytics.group({ userId: "u1", groupId: "g1", messageId: id("group", 0) });
    analytics.alias({ userId: "u1", previousId: "anon-1", messageId: id("alias", 0) });
    for (let n = 0; n < TRACKS; n++) analytics.track({ userId: `u${n % 100}`, event: "Item Viewed", properties: { n }, messageId: id("track", n) });
    await analytics.closeAndFlush({ timeout: 120_000 });

    expect(socketFailures).toEqual([]);
    expect([...statuses.keys()]).toEqual([200]);
    const health = async () =>
      (await (await fetch(`${serve.url}/health`)).json()) as { accepted: number; delivered: number; pending: number; libraries: Record<string, number> };
    await expect.poll(async () => (await health()).delivered, { timeout: 120_000, interval: 200 }).toBeGreaterThanOrEqual(sent.length);
    const counts = await health();
    // serve took each call once: the client never resent a batch serve had already taken.
    expect(counts).toMatchObject({ accepted: sent.length, delivered: sent.length, pending: 0 });
    expect(Object.keys(counts.libraries)).toEqual(["@segment/analytics-node"]);

    const received = readFileSync(recording, "utf8")
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { body: { messageId: string } }).body.messageId);
    // Every call reached listen. serve's own delivery is at least once, as the destination's is: on a
    // loaded machine an answer from listen can miss serve's 5 s deadline and that message is sent again,
    // so listen may see a message twice; the client's side is what "exactly once" is about (above).
    expect(new Set(received)).toEqual(new Set(sent));
  });
});
