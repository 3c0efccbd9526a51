import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, launchChromium, type Browser } from "../helpers/browser.js";
import { startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// A page on another origin drives Chromium at the inspector's API. A no-cors answer is opaque to
// that page, so what the inspector answered is read on its side: listen runs in process, and
// node:http's diagnostics channels tell every request it serves and the status it sent.

const { path: chromiumPath } = browserAvailability();

interface Answer {
  event: "start" | "finish";
  port: number;
  method: string;
  url: string;
  site: string | null;
  origin: string | null;
  status?: number;
}

/** The other origin's page: it asks the inspector for its API every way a page can without CORS' consent. */
const ATTACK_PAGE = `<!doctype html>
<meta charset="utf-8">
<title>another origin</title>
<body>
<script>
const params = new URLSearchParams(location.search);
const target = params.get("target");
const tag = params.get("tag");
const hit = (path, how) => target + path + (path.includes("?") ? "&" : "?") + "via=" + how + "-" + tag;
fetch(hit("/api/download?ids=1,1,2", "fetch-no-cors"), { mode: "no-cors" }).catch(() => {});
fetch(hit("/api/requests/1", "fetch-detail-no-cors"), { mode: "no-cors" }).catch(() => {});
fetch(hit("/api/requests/1", "fetch-cors")).catch(() => {});
const img = new Image();
img.src = hit("/api/download?ids=1", "img");
const script = document.createElement("script");
script.src = hit("/api/requests/1", "script");
document.body.append(script);
const frame = document.createElement("iframe");
frame.src = hit("/api/requests/2", "iframe");
document.body.append(frame);
new EventSource(hit("/api/events", "eventsource"));
const link = document.createElement("a");
link.id = "navigate";
link.href = hit("/api/requests/1", "link");
link.textContent = "open";
document.body.append(link);
const home = document.createElement("a");
home.id = "home";
home.href = target + "/?via=home-" + tag;
home.textContent = "the inspector";
document.body.append(home);
</script>
</body>`;
const ATTACKS = ["fetch-no-cors", "fetch-detail-no-cors", "fetch-cors", "img", "script", "iframe", "eventsource"];

describe.skipIf(chromiumPath === undefined)("the inspector's API refuses other origins (headless Chromium)", () => {
  const files = tempDir("webhook-cli-inspector-origin-");
  const served: Answer[] = [];
  const record =
    (event: Answer["event"]) =>
    (message: unknown): void => {
      const { request, response, socket } = message as { request: IncomingMessage; response: ServerResponse; socket?: { localPort?: number } };
      served.push({
        event,
        port: socket?.localPort ?? request.socket.localPort ?? 0,
        method: request.method ?? "",
        url: request.url ?? "",
        site: (request.headers["sec-fetch-site"] as string | undefined) ?? null,
        origin: request.headers.origin ?? null,
        ...(event === "finish" ? { status: response.statusCode } : {}),
      });
    };
  const onStart = record("start");
  const onFinish = record("finish");
  let listen: InProcessRun;
  let inspector: string;
  let inspectorPort: number;
  let other: Server;
  let otherPort: number;
  let browser: Browser;

  beforeAll(async () => {
    subscribe("http.server.request.start", onStart);
    subscribe("http.server.response.finish", onFinish);
    listen = startInProcess(["listen", "--port", "0", "--ui", "--ui-port", "0"]);
    const [, receiver, page] = await listen.waitFor(/Listening on (\S+)[\s\S]*Inspector: (\S+)/, 15_000);
    inspector = page as string;
    inspectorPort = Number(new URL(inspector).port);
    for (const userId of ["ada", "bob"]) {
      const body = JSON.stringify({ version: 1, type: "track", userId, event: "E", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" });
      const response = await request(`${receiver as string}/hook`, { method: "POST", headers: { "content-type": "application/json" }, body });
      await response.body.dump();
    }
    other = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ATTACK_PAGE));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    otherPort = (other.address() as AddressInfo).port;
    browser = await launchChromium(chromiumPath);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    listen?.stop("SIGTERM");
    await listen?.code;
    unsubscribe("http.server.request.start", onStart);
    unsubscribe("http.server.response.finish", onFinish);
    await new Promise((resolve) => other?.close(resolve));
  });

  const answers = (): Answer[] => served.filter((answer) => answer.port === inspectorPort);
  /** The status the inspector finished each `via=…-tag` request with (absent: not answered, or still streaming). */
  const finished = (tag: string): Record<string, number | undefined> => {
    const statuses: Record<string, number | undefined> = {};
    for (const answer of answers()) {
      const how = /[?&]via=([a-z-]+)-([a-z]+)$/.exec(answer.url);
      if (how?.[2] === tag && answer.event === "finish") statuses[how[1] as string] = answer.status;
    }
    return statuses;
  };

  it.each([
    ["same-site", "127.0.0.1", "sameport"],
    ["cross-site", "localhost", "crosssite"],
  ] as const)("a page on another origin (%s: http://%s:OTHER) gets 403 for every API request; its link to the page itself works", async (site, host, tag) => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`http://${host}:${otherPort}/?target=${encodeURIComponent(inspector)}&tag=${tag}`);
      const expected = Object.fromEntries(ATTACKS.map((how) => [how, 403]));
      await expect.poll(() => finished(tag), { timeout: 10_000 }).toEqual(expected);
      // Chromium said where each request came from: the refusal rests on what a browser really sends.
      for (const answer of answers().filter((a) => a.event === "start" && a.url.endsWith(`-${tag}`))) expect(answer.site, answer.url).toBe(site);
      // A link from that page: a top-level navigation to the API is refused, to the page itself allowed.
      await Promise.all([page.waitForURL(/via=link-/), page.click("#navigate")]);
      expect(await page.textContent("body")).toContain("refused");
      await page.goBack();
      await Promise.all([page.waitForURL(/via=home-/), page.click("#home")]);
      await page.locator("#live", { hasText: "live" }).waitFor({ timeout: 10_000 });
      expect(finished(tag)).toMatchObject({ link: 403, home: 200 });
    } finally {
      await page.close();
    }
  });

  it("the page's own requests (same origin) and a typed URL still work: live list, detail, Download", async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(inspector);
      await page.locator("#live", { hasText: "live" }).waitFor({ timeout: 10_000 });
      await expect.poll(() => page.locator("#rows tr").count()).toBe(2);
      await page.locator("#rows tr", { hasText: "ada" }).click();
      await expect.poll(() => page.locator("#detail h2").textContent()).toContain("ada");
      const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download").click()]);
      const saved = `${files.dir}/own.ndjson`;
      await download.saveAs(saved);
      const lines = readFileSync(saved, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { body: { userId: string } });
      expect(lines.map((line) => line.body.userId)).toEqual(["ada", "bob"]);
      const typed = await page.goto(`${inspector}/api/requests/2`);
      expect(typed?.status()).toBe(200);
      expect(await page.textContent("body")).toContain('"userId":"bob"');
      expect(answers().find((a) => a.event === "start" && a.url === "/api/requests/2")?.site).toBe("none");
      const own = answers().filter((a) => a.event === "start" && /^\/api\/(requests\/1|download|events)/.test(a.url) && !a.url.includes("via="));
      expect(own.length).toBeGreaterThanOrEqual(3);
      expect(new Set(own.map((a) => a.site))).toEqual(new Set(["same-origin"]));
    } finally {
      await page.close();
    }
  });

  it("a page past the stream cap says so, and goes live once a stream is free", async () => {
    // The earlier tests' pages held streams too; their slots free once listen sees those sockets
    // close, so a refused stream is tried again until all 16 are ours.
    const held: Socket[] = [];
    while (held.length < 16) held.push(await idleStreamWhenFree(inspector));
    const page = await browser.context.newPage();
    try {
      await page.goto(inspector);
      await page.locator("#live", { hasText: "too many inspector tabs open" }).waitFor({ timeout: 10_000 });
      held.pop()?.destroy();
      await page.locator("#live", { hasText: /^live$/ }).waitFor({ timeout: 10_000 });
      await expect.poll(() => page.locator("#rows tr").count()).toBe(2);
    } finally {
      await page.close();
      for (const socket of held) socket.destroy();
    }
  });
});

/** An event stream that is opened and never read, tried again while the stream cap refuses it. */
async function idleStreamWhenFree(inspector: string): Promise<Socket> {
  let socket: Socket | undefined;
  const opened = async (): Promise<string> => {
    try {
      socket = await idleStream(inspector);
      return "open";
    } catch (error) {
      return String(error);
    }
  };
  await expect.poll(opened, { interval: 100, message: "a stream is free" }).toBe("open");
  return socket as Socket;
}

/** An event stream that is opened and never read. */
function idleStream(inspector: string): Promise<Socket> {
  const { hostname, port } = new URL(inspector);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`GET /api/events HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`));
    socket.once("error", reject);
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      if (chunk.toString("latin1").startsWith("HTTP/1.1 200 ")) resolve(socket);
      else {
        socket.destroy();
        reject(new Error(`event stream refused: ${chunk.toString("latin1").split("\r\n")[0] ?? ""}`));
      }
    });
  });
}
