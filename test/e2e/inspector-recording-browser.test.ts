import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatRecordLine } from "../../src/receiver/record.js";
import { browserAvailability, launchChromium, type Browser } from "../helpers/browser.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { IDENTIFY, TRACK } from "../helpers/messages.js";
import { openInspector } from "../helpers/inspector-page.js";
import { jsonEvents, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

const SECRET = "inspect-browser-secret";
const hmac = (body: string) => createHmac("sha1", SECRET).update(body).digest("hex");
const { path: chromiumPath } = browserAvailability();

/** 250 recorded tracks (past one page of 200), line 1 holding a string found only in its body, line 250 a PUT batch signed over element 0. */
const COUNT = 250;
const FIRST = JSON.stringify({ ...TRACK, userId: "batch-first" });
const BATCH = `[${FIRST},${JSON.stringify({ ...TRACK, userId: "batch-second" })}]`;
function recordingLine(i: number): string {
  const last = i === COUNT;
  const body = last ? BATCH : JSON.stringify({ ...TRACK, userId: `user-${i}`, properties: { note: i === 1 ? "only-in-line-one" : "plain" } });
  return formatRecordLine({
    receivedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5) + i * 1000),
    method: last ? "PUT" : "POST",
    path: "/hook",
    headers: { "content-type": "application/json", "x-signature": hmac(last ? FIRST : body) },
    signatureValid: true,
    signatureRule: last ? "first-element" : "body",
    raw: Buffer.from(body),
    text: body,
    body: JSON.parse(body),
  });
}

/** The `request` events of a receiving listen run with --json. */
const requestEvents = (run: InProcessRun): Record<string, unknown>[] => jsonEvents(run.stdout(), "request");

describe.skipIf(chromiumPath === undefined)("inspect FILE in headless Chromium: a recording, search, keys, edit then resend", () => {
  const files = tempDir("webhook-cli-inspect-browser-");
  const recording = join(files.dir, "received.ndjson");
  let original: Buffer;
  let inspect: InProcessRun;
  let target: InProcessRun;
  let targetUrl: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    writeFileSync(recording, Array.from({ length: COUNT }, (_, i) => recordingLine(i + 1)).join(""));
    original = readFileSync(recording);
    target = startInProcess(["listen", "--port", "0", "--secret", SECRET, "--json"]);
    targetUrl = (await target.waitFor(/"event":"listening","url":"([^"]+)"/))[1] as string;
    inspect = startInProcess(["inspect", recording, "--port", "0", "--secret", SECRET]);
    const url = (await inspect.waitFor(/Inspector: (\S+)/))[1] as string;
    browser = await launchChromium(chromiumPath);
    page = await browser.context.newPage();
    await page.goto(url);
    await page.locator("#rows tr").nth(199).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    inspect?.stop("SIGINT");
    target?.stop("SIGINT");
    await Promise.all([inspect?.code, target?.code]);
  });

  const rows = () => page.locator("#rows tr");
  const labelsShown = async () => (await rows().evaluateAll((trs) => trs.map((tr) => tr.querySelector("td")?.textContent ?? ""))) as string[];

  it("opens the recording: its name and size in the header, the newest page of rows labelled by line number", async () => {
    expect(await page.locator("#recording-file").textContent()).toBe(`received.ndjson (${(original.length / 1024).toFixed(1)} KB)`);
    expect(await page.locator("#recording-count").textContent()).toBe(String(COUNT));
    expect(await page.locator("#live").textContent()).toBe("recording (read-only)");
    expect(await rows().count()).toBe(200);
    expect((await labelsShown()).slice(0, 3)).toEqual(["250", "249", "248"]);
    expect(await rows().first().locator("td").allTextContents()).toEqual(expect.arrayContaining(["PUT", "/hook", "batch of 2", "ok"]));
    await page.locator("#older").click();
    await expect.poll(labelsShown).toEqual(Array.from({ length: 50 }, (_, i) => String(50 - i)));
    expect(await page.locator("#older").isDisabled()).toBe(true);
    await page.locator("#newer").click();
    await expect.poll(() => rows().count()).toBe(200);
  });

  it("searches the bodies of the whole file on the server, not only the page shown", async () => {
    await page.fill("#filter-text", "only-in-line-one");
    await expect.poll(labelsShown).toEqual(["1"]);
    expect(await page.locator("#search-note").textContent()).toMatch(/^searched .* of the recording, to the oldest request$/);
    await page.fill("#filter-text", "");
    await page.selectOption("#filter-type", "batch");
    await expect.poll(labelsShown).toEqual(["250"]);
    await page.selectOption("#filter-type", "");
    await expect.poll(() => rows().count()).toBe(200);
  });

  it("keyboard: / focuses the search, Escape leaves it, j/k and the arrows move, Enter opens", async () => {
    await page.locator("h1").click();
    await page.keyboard.press("/");
    expect(await page.evaluate("document.activeElement?.id")).toBe("filter-text");
    await page.keyboard.press("Escape");
    expect(await page.evaluate('document.activeElement?.id ?? ""')).not.toBe("filter-text");
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("ArrowDown");
    // The first press takes the top row (250); then 249, 248, and back up to 249.
    await page.keyboard.press("k");
    expect(await page.locator("#rows tr.cursor td").first().textContent()).toBe("249");
    expect(await page.locator("#detail").isHidden()).toBe(true);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^#249 track · user-249/);
    // Up stops at the top row.
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowUp");
    expect(await page.locator("#rows tr.cursor td").first().textContent()).toBe("250");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^#250 batch of 2/);
  });

  it("edit then resend: the edited batch is re-signed over element 0 and verifies at a listen; the new row says edited; the original is unchanged", async () => {
    await page.locator("#edit").click();
    const editor = page.locator("#edit-body");
    expect(await editor.inputValue()).toBe(BATCH);
    await editor.fill(BATCH.replace('"batch-first"', '"edited-first"'));
    await page.fill("#resend-url", `${targetUrl}/edited`);
    await page.locator("#send-edited").click();
    await expect.poll(() => page.locator("#action-note").textContent()).toMatch(/^Edited and resent as #R1 → 200/);
    await expect.poll(() => requestEvents(target).at(-1)).toMatchObject({ path: "/edited", signatureValid: true, signatureRule: "first-element" });

    // The new row heads the list, marked edited and linked to line 250.
    await expect.poll(() => rows().first().locator("td").first().textContent()).toBe("R1");
    expect(await rows().first().locator("td").nth(8).textContent()).toBe("↻ #250 edited");
    await page.locator("#action-note .link").click();
    await expect.poll(() => page.locator("#resend-of").textContent()).toBe(` · edited resend of #250 to ${targetUrl}/edited`);
    expect(await page.locator("#body-raw").textContent()).toContain('"edited-first"');

    // The original row still holds what was received; the file is untouched.
    await page.locator("#resend-of .link").click();
    await expect.poll(() => page.locator("#detail h2").textContent()).toMatch(/^#250 batch of 2/);
    expect(await page.locator("#body-raw").textContent()).toBe(BATCH);
    expect(readFileSync(recording).equals(original)).toBe(true);
  });
});

describe.skipIf(chromiumPath === undefined)("listen --ui with per-type routing in headless Chromium", () => {
  let tracks: TestServer;
  let rest: TestServer;
  let listen: InProcessRun;
  let receiverUrl: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    tracks = await startServer();
    rest = await startServer();
    ({ listen, receiverUrl, browser, page } = await openInspector(chromiumPath, [
      ...["--secret", SECRET, "--forward-to", `track=${tracks.url}/track`, "--forward-to", `${rest.url}/rest`],
    ]));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    listen?.stop("SIGINT");
    await listen?.code;
    await Promise.all([tracks?.close(), rest?.close()]);
  });

  const rows = () => page.locator("#rows tr");

  it("shows the routing in the header; a row's Resend and curl follow its route; search finds text only in a body", async () => {
    expect(await page.locator("#forward-url .route").allTextContents()).toEqual([`track → ${tracks.url}/track`, `the rest → ${rest.url}/rest`]);
    const post = async (body: string) => {
      const response = await fetch(`${receiverUrl}/hooks`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", "x-signature": hmac(body) },
      });
      await response.arrayBuffer();
    };
    await post(JSON.stringify({ ...TRACK, properties: { secretWord: "body-only-word" } }));
    await post(JSON.stringify(IDENTIFY));
    await expect.poll(() => rows().count()).toBe(2);
    expect(tracks.requests).toHaveLength(1);
    expect(rest.requests).toHaveLength(1);

    await rows().nth(1).click();
    await expect.poll(() => page.locator("#resend-url").inputValue()).toBe(`${tracks.url}/track`);
    expect(await page.locator("#curl-text").textContent()).toContain(`'${tracks.url}/track'`);
    await rows().nth(0).click();
    await expect.poll(() => page.locator("#resend-url").inputValue()).toBe(`${rest.url}/rest`);

    await page.fill("#filter-text", "body-only-word");
    await expect.poll(() => rows().count()).toBe(1);
    expect(await rows().first().textContent()).toContain("track");
  });
});
