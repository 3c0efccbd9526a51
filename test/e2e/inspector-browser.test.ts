import { createHmac } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAvailability, type Browser } from "../helpers/browser.js";
import { sendRaw } from "../helpers/hostile-requests.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { openInspector } from "../helpers/inspector-page.js";
import { runInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

const SECRET = "inspector-browser-secret";
const hmac = (body: Buffer) => createHmac("sha1", SECRET).update(body).digest("hex");
const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));
const { path: chromiumPath, skip } = browserAvailability();

// In CI a missing browser is a failed test, not a silent skip.
describe.runIf(!skip && chromiumPath === undefined)("browser tests in CI", () => {
  it("find Chromium to drive", () => {
    expect.fail("CI=true and no Chromium found: .ci/run installs it with `apt-get install -y chromium` (or set CHROMIUM_PATH)");
  });
});

describe.skipIf(chromiumPath === undefined)("listen --ui in headless Chromium", () => {
  const files = tempDir("webhook-cli-inspector-browser-");
  let app: TestServer;
  let listen: InProcessRun;
  let receiverUrl: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    app = await startServer((_req, res) => {
      res.writeHead(202, { "content-type": "application/json" });
      res.end('{"queued":true}');
    });
    ({ listen, receiverUrl, browser, page } = await openInspector(chromiumPath, ["--secret", SECRET, "--forward-to", `${app.url}/webhook`]));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    listen?.stop("SIGTERM");
    await listen?.code;
    await app?.close();
  });

  const rows = () => page.locator("#rows tr");
  const send = (type: string, secretArgs: string[] = ["--secret", SECRET], userId = `${type}-user`) =>
    runInProcess(["send", "--type", type, "--user-id", userId, "--url", `${receiverUrl}/hooks`, ...secretArgs]);

  it("shows requests sent with `send` live, newest first, with the app's answer", async () => {
    expect((await send("track")).code).toBe(0);
    await expect.poll(() => rows().count()).toBe(1);
    expect((await send("identify")).code).toBe(0);
    await expect.poll(() => rows().count()).toBe(2);
    const newest = rows().first();
    await expect.poll(() => newest.textContent()).toContain("identify-user");
    const cells = await newest.locator("td").allTextContents();
    expect(cells).toEqual(expect.arrayContaining(["2", "POST", "/hooks", "identify", "ok", "202"]));
    expect(await rows().nth(1).textContent()).toContain("track-user");
  });

  it("shows a bad signature's diagnosis in the detail pane", async () => {
    // The sender's secret has a stray trailing newline: the diagnosis names it.
    const secretFile = files.file("sender.secret", `${SECRET}\n\n`);
    await send("page", ["--secret-file", secretFile]);
    await expect.poll(() => rows().count()).toBe(3);
    await rows().first().click();
    const problem = page.locator("#signature-problem");
    await expect.poll(() => problem.textContent()).toContain("X-Signature does not match the body");
    expect(await problem.textContent()).toContain("the sender's secret has stray whitespace");
    expect(await rows().first().locator("td").nth(6).textContent()).toBe("failed");
  });

  it("filters by verdict, type and free text", async () => {
    await page.selectOption("#filter-verdict", "signature");
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().textContent()).toContain("page-user");
    await page.selectOption("#filter-verdict", "valid");
    await expect.poll(() => rows().count()).toBe(2);
    await page.selectOption("#filter-verdict", "");
    await page.selectOption("#filter-type", "track");
    await expect.poll(() => rows().count()).toBe(1);
    await page.selectOption("#filter-type", "");
    await page.fill("#filter-text", "identify-us");
    await expect.poll(() => rows().count()).toBe(1);
    expect(await page.locator("#count").textContent()).toBe("1 of 3 requests");
    await page.fill("#filter-text", "");
    await expect.poll(() => rows().count()).toBe(3);
  });

  it("Resend delivers the exact bytes, re-signed, to the app and adds a row linked to the original", async () => {
    const before = app.requests.length;
    const original = app.requests.find((r) => r.body.includes("track-user"));
    await rows().filter({ hasText: "track-user" }).click();
    // The pane still shows the row opened before until this one's detail arrives.
    await expect.poll(() => page.locator("#detail h2").textContent()).toContain("track-user");
    await page.locator("#resend").click();
    await expect.poll(() => rows().count()).toBe(4);
    const resent = rows().first();
    expect(await resent.textContent()).toContain("R1");
    expect(await resent.textContent()).toContain("↻ #1");
    await expect.poll(() => app.requests.length).toBe(before + 1);
    const delivered = app.requests.at(-1);
    expect(delivered?.body.equals(original?.body ?? Buffer.alloc(0))).toBe(true);
    expect(delivered?.headers["x-signature"]).toBe(hmac(delivered?.body ?? Buffer.alloc(0)));
    await expect.poll(() => page.locator("#action-note").textContent()).toContain("Resent as #R1 → 202");
  });

  it("Download gives a recording that replay sends byte-identical", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#download").click()]);
    const file = `${files.dir}/downloaded.ndjson`;
    await download.saveAs(file);
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(4);
    const target = await startServer();
    try {
      const replay = await runInProcess(["replay", file, "--url", target.url, "--secret", SECRET]);
      expect(replay.code, replay.stderr).toBe(0);
      // What listen received (and forwarded), byte for byte, the resent copy included.
      const sent = (server: TestServer) => server.requests.map((r) => r.body.toString("base64")).sort();
      expect(sent(target)).toEqual(sent(app));
      for (const request of target.requests) expect(request.headers["x-signature"]).toBe(hmac(request.body));
    } finally {
      await target.close();
    }
  });

  it("says why a request whose target is not a path cannot be copied as curl", async () => {
    const { port } = new URL(receiverUrl);
    const answer = await sendRaw(Number(port), Buffer.from(`POST *@127.0.0.1:9/x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 2\r\n\r\n{}`));
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    const row = rows().filter({ hasText: "*@127.0.0.1:9/x" });
    await row.click();
    await expect
      .poll(() => page.locator("#curl-problem").textContent())
      .toContain("Cannot be copied as curl: its request-target is not a path starting with /");
    expect(await page.locator("#curl-text").count()).toBe(0);
    await page.locator("#copy-curl").click();
    await expect.poll(() => page.locator("#action-note").textContent()).toContain("Cannot be copied as curl");
  });

  it("saves a screenshot of the page with a request open", async () => {
    await rows().filter({ hasText: "page-user" }).click();
    await page.locator("#signature-problem").waitFor();
    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = await page.screenshot({ path: `${ARTIFACTS}inspector.png`, fullPage: true });
    expect(shot.length).toBeGreaterThan(10_000);
  });
});
