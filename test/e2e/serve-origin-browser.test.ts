import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, launchChromium, type Browser } from "../helpers/browser.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { startInProcess, type InProcessRun } from "../helpers/run-cli.js";

/**
 * What docs/serve-api.md#browsers-cors-and-the-host-check says guards serve, in Chromium: a page on
 * another origin (`shop.test`, resolved to 127.0.0.1 by the browser) posts to serve at
 * http://127.0.0.1:PORT as any website could. By default the call is queued and forwarded, signed,
 * and the page reads the answers; with --allow-origin it is refused and nothing is queued. The
 * Host check stops only a page that rebinds its own name to serve's address. Requests really leave
 * the page (no playwright route()).
 */

const { path: chromiumPath } = browserAvailability();
const WRITE_KEY = "wk_page";
const SECRET = "origin-secret";
const RULES = "MAP shop.test 127.0.0.1, MAP rebound.test 127.0.0.1";

/** A page's origin of its own: a blank page on another port. */
async function startPageServer(): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === "/favicon.ico") return void res.writeHead(204).end();
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>another site</title>");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { port: (server.address() as AddressInfo).port, server };
}

/** What a page posts: the short path analytics.js uses, the write key in the body, `text/plain` (no preflight). */
interface PagePost {
  url: string;
  writeKey: string;
  mode: "cors" | "no-cors";
}
const POST_FROM_PAGE = async ({ url, writeKey, mode }: PagePost): Promise<{ status: number; text: string }> => {
  const body = JSON.stringify({ writeKey, userId: "u_page", event: "Posted By Another Page", type: "track" });
  try {
    const answer = await fetch(url, { method: "POST", mode, headers: { "Content-Type": "text/plain" }, body });
    return { status: answer.status, text: mode === "no-cors" ? "" : await answer.text() };
  } catch (error) {
    return { status: -1, text: String(error) };
  }
};

/** Runs the post in the page `tab` has open. */
const postFrom = (tab: Page, post: PagePost) => tab.evaluate(POST_FROM_PAGE, post);

async function accepted(serveUrl: string): Promise<number> {
  const answer = await request(`${serveUrl}/health`);
  return ((await answer.body.json()) as { accepted: number }).accepted;
}

describe.skipIf(chromiumPath === undefined)("serve and a page on another origin, in Chromium", () => {
  let browser: Browser;
  let page: { port: number; server: Server };
  let app: TestServer;
  const serves: InProcessRun[] = [];

  async function startServe(extra: string[]): Promise<{ url: string; port: number }> {
    const args = ["serve", "--port", "0", "--memory", "--write-key", WRITE_KEY, "--url", `${app.url}/hook`, "--secret", SECRET, ...extra];
    const serve = startInProcess(args);
    serves.push(serve);
    const url = (await serve.waitFor(/Listening on (\S+)/, 15_000))[1] as string;
    return { url, port: Number(new URL(url).port) };
  }

  beforeAll(async () => {
    [page, app] = await Promise.all([startPageServer(), startServer()]);
    browser = await launchChromium(chromiumPath, [`--host-resolver-rules=${RULES}`]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const serve of serves) serve.stop("SIGINT");
    await Promise.all(serves.map((serve) => serve.code));
    await app?.close();
    await new Promise((done) => page?.server.close(done));
  });

  it("by default: the page's call is queued and forwarded signed to the configured URL, and the page reads serve's answers", async () => {
    const serve = await startServe([]);
    const tab = await browser.context.newPage();
    await tab.goto(`http://shop.test:${page.port}/`);
    const posted = await postFrom(tab, { url: `${serve.url}/v1/t`, writeKey: WRITE_KEY, mode: "cors" });
    expect(posted).toEqual({ status: 200, text: '{"success":true}' });
    const health = await tab.evaluate(async (url) => (await fetch(`${url}/health`)).json(), serve.url);
    expect(health).toMatchObject({ status: "ok", accepted: 1 });
    // The worker forwards on its own time: waited for as an event, with a bound far past it.
    await expect.poll(() => app.requests.filter((r) => r.url === "/hook").length, { timeout: 30_000 }).toBe(1);
    const forwarded = app.requests.find((r) => r.url === "/hook");
    expect(JSON.parse(forwarded?.body.toString() ?? "{}")).toMatchObject({ type: "track", event: "Posted By Another Page" });
    expect(forwarded?.headers["x-signature"]).toMatch(/^[0-9a-f]{40}$/);
    await tab.close();
  });

  it("--allow-origin: the same call from a page not listed is refused, nothing queued", async () => {
    const serve = await startServe(["--allow-origin", "http://localhost:3000"]);
    const tab = await browser.context.newPage();
    await tab.goto(`http://shop.test:${page.port}/`);
    // no-cors: the browser sends it and hides the answer, so only serve can refuse it.
    await postFrom(tab, { url: `${serve.url}/v1/t`, writeKey: WRITE_KEY, mode: "no-cors" });
    const readable = await postFrom(tab, { url: `${serve.url}/v1/t`, writeKey: WRITE_KEY, mode: "cors" });
    expect(readable.status).toBe(-1);
    expect(await accepted(serve.url)).toBe(0);
    await tab.close();
  });

  it("the Host check: a page whose own name is rebound to serve's address is refused (403), nothing queued", async () => {
    const serve = await startServe([]);
    const tab = await browser.context.newPage();
    const opened = await tab.goto(`http://rebound.test:${serve.port}/health`);
    expect(opened?.status()).toBe(403);
    // Same origin now: the page reads serve's refusal.
    const posted = await postFrom(tab, { url: "/v1/t", writeKey: WRITE_KEY, mode: "cors" });
    expect(posted.status).toBe(403);
    expect(posted.text).toContain("serve answers only loopback names here (Host: rebound.test:");
    expect(await accepted(serve.url)).toBe(0);
    await tab.close();
  });
});
